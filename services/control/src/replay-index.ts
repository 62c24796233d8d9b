import type { AvroCodec } from '@switchyard/platform/codec/avro-codec';
import type { Kafka, Producer } from '@switchyard/platform/kafka/client';
import { followTopic } from '@switchyard/platform/kafka/topic-follower';
import type { Logger } from '@switchyard/platform/logger';
import type { Replay, ReplayProgress } from '@switchyard/platform/schemas/generated';

/** GET …/replays/{id}: what a replay is doing (docs/delivery.md, "Replays of a time range"). */
export interface ReplayView {
  id: string;
  destinationId: string;
  state: 'running' | 'done' | 'cancelled' | 'failed';
  from: string;
  to: string;
  filter: unknown;
  /** The rate asked for (records read per second at most; fan-out caps it at FANOUT_REPLAY_MAX_RATE). */
  rate: number;
  createdAt: string;
  cancelRequestedAt: string | null;
  /** Ingest records in the range (known once the replay started), read so far, let through by the filters, and tasks written. */
  total: number | null;
  scanned: number;
  matched: number;
  enqueued: number;
  /** scanned / total, 0..1. */
  progress: number;
  /** Records read per second while running. */
  recordsPerSecond: number | null;
  /** Estimated seconds until done at that rate; null when not running or not known yet. */
  etaSeconds: number | null;
  updatedAt: string | null;
  error: string | null;
  /** Parts of the range before the topic's retention: calls received in them cannot be replayed. */
  notReplayable: Array<{ partition: number; from: string; to: string }>;
}

const iso = (ms: number) => new Date(ms).toISOString();

/** Pure: a replay request and its latest progress, as the API shows them. */
export function replayView(r: Replay, p: ReplayProgress | undefined): ReplayView {
  const total = p ? p.partitions.reduce((n, x) => n + (x.end - x.start), 0) : null;
  const left = p ? p.partitions.reduce((n, x) => n + Math.max(0, x.end - x.next), 0) : null;
  const read = total !== null && left !== null ? total - left : 0;
  const perSecond = p && p.runningMs > 0 ? (p.scanned / p.runningMs) * 1000 : null;
  const state = (p?.state ?? 'running') as ReplayView['state'];
  return {
    id: r.id, destinationId: r.destinationId, state, from: iso(r.from), to: iso(r.to), filter: r.filter === null ? null : JSON.parse(r.filter) as unknown,
    rate: r.rate, createdAt: iso(r.createdAt), cancelRequestedAt: r.cancelRequestedAt === null ? null : iso(r.cancelRequestedAt),
    total, scanned: p?.scanned ?? 0, matched: p?.matched ?? 0, enqueued: p?.enqueued ?? 0,
    progress: total === null ? 0 : total === 0 ? 1 : Math.min(1, read / total),
    recordsPerSecond: perSecond === null ? null : Math.round(perSecond * 10) / 10,
    etaSeconds: state === 'running' && perSecond && left !== null ? Math.ceil(left / perSecond) : null,
    updatedAt: p ? iso(p.updatedAt) : null, error: p?.error ?? null,
    notReplayable: (p?.partitions ?? []).filter((x) => x.retainedFrom !== null).map((x) => ({ partition: x.partition, from: iso(r.from), to: iso(x.retainedFrom!) })),
  };
}

/**
 * The replays topic in memory (requests written here, progress written by fan-out), for the API:
 * follows it from the beginning with a group of its own and read_committed, so progress shows only
 * once its tasks are committed.
 */
export class ReplayIndex {
  private readonly replays = new Map<string, Replay>();
  private readonly progress = new Map<string, ReplayProgress>();
  private follower: { stop(): Promise<void> } | undefined;

  /** `onProgress` hears of every progress record read (notifications: notifier.ts). */
  constructor(private readonly opts: { kafka: Kafka; codec: AvroCodec; topic: string; logger: Logger; producer: Pick<Producer, 'send'>; onProgress?: (replay: Replay | undefined, progress: ReplayProgress) => void }) {}

  async start(): Promise<void> {
    this.follower = await followTopic({
      ...this.opts, label: 'replay-index', from: 'beginning',
      onRecord: (decoded) => {
        if (decoded.name === 'io.switchyard.pipeline.Replay') this.replays.set(decoded.value.id, decoded.value);
        else if (decoded.name === 'io.switchyard.pipeline.ReplayProgress') {
          this.addProgress(decoded.value);
          this.opts.onProgress?.(this.replays.get(decoded.value.id), decoded.value);
        }
      },
    });
  }

  async stop(): Promise<void> { await this.follower?.stop(); }

  /** Writes a request (or its cancellation) and shows it at once. */
  async write(r: Replay): Promise<void> {
    await this.opts.producer.send({ topic: this.opts.topic, acks: -1, messages: [{ key: `replay:${r.id}`, value: this.opts.codec.encode('io.switchyard.pipeline.Replay', r) }] });
    this.replays.set(r.id, r);
  }

  get(id: string): { replay: Replay; progress: ReplayProgress | undefined } | undefined {
    const replay = this.replays.get(id);
    return replay ? { replay, progress: this.progress.get(id) } : undefined;
  }

  /** A destination's replays, newest first. */
  ofDestination(destinationId: string): Array<{ replay: Replay; progress: ReplayProgress | undefined }> {
    return [...this.replays.values()].filter((r) => r.destinationId === destinationId).sort((a, b) => b.createdAt - a.createdAt).map((replay) => ({ replay, progress: this.progress.get(replay.id) }));
  }

  private addProgress(p: ReplayProgress): void {
    const known = this.progress.get(p.id);
    if (known && known.updatedAt > p.updatedAt) return;
    this.progress.set(p.id, p);
  }
}
