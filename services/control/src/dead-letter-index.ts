import type { AvroCodec } from '@switchyard/platform/codec/avro-codec';
import type { Kafka } from '@switchyard/platform/kafka/client';
import { followTopic } from '@switchyard/platform/kafka/topic-follower';
import type { Logger } from '@switchyard/platform/logger';
import type { DeadLetter } from '@switchyard/platform/schemas/generated';

export interface IndexedDeadLetter {
  /** `<partition>-<offset>` on the dead-letter topic: stable, and all a replay needs. */
  id: string;
  letter: DeadLetter;
  replayedAt: number | null;
}

export interface DeadLetterQuery {
  destinationId?: string; reason?: string; since?: number; limit: number;
  /** Only letters of the sources it allows (a token limited to sources); absent: every source. */
  sourceAllowed?: (sourceId: string) => boolean;
}

/**
 * The dead letters operators browse and replay, read from the dead-letter topic into memory. The
 * topic keeps 30 days; the index keeps at most `max` letters (the oldest are forgotten first, and
 * stay on the topic). Replay marks are kept in memory only: after a restart a letter shows as not
 * replayed again (replaying it twice delivers it twice; receivers dedupe on messageId).
 */
export class DeadLetterIndex {
  private readonly letters = new Map<string, IndexedDeadLetter>();
  private follower: { stop(): Promise<void> } | undefined;

  /** `onLetter` hears of every dead letter read (notifications: notifier.ts). */
  constructor(private readonly opts: { kafka: Kafka; codec: AvroCodec; topic: string; logger: Logger; max: number; onLetter?: (letter: DeadLetter) => void }) {}

  async start(): Promise<void> {
    this.follower = await followTopic({
      ...this.opts, label: 'dead-letter-index', from: 'beginning',
      onRecord: (decoded, { partition, offset }) => {
        if (decoded.name !== 'io.switchyard.pipeline.DeadLetter') return;
        this.add(`${partition}-${offset}`, decoded.value);
        this.opts.onLetter?.(decoded.value);
      },
    });
  }

  add(id: string, letter: DeadLetter): void {
    this.letters.set(id, { id, letter, replayedAt: null });
    if (this.letters.size > this.opts.max) this.letters.delete(this.letters.keys().next().value!);
  }

  get(id: string): IndexedDeadLetter | undefined { return this.letters.get(id); }
  get size(): number { return this.letters.size; }
  get max(): number { return this.opts.max; }

  markReplayed(id: string, at: number): void {
    const entry = this.letters.get(id);
    if (entry) entry.replayedAt = at;
  }

  /** Newest first. */
  query({ destinationId, reason, since, limit, sourceAllowed }: DeadLetterQuery): { items: IndexedDeadLetter[]; total: number } {
    const matching = [...this.letters.values()].filter(({ letter }) =>
      (destinationId === undefined || letter.task.destinationId === destinationId)
      && (sourceAllowed === undefined || sourceAllowed(letter.task.sourceId))
      && (reason === undefined || letter.reason === reason)
      && (since === undefined || letter.failedAt >= since));
    matching.sort((a, b) => b.letter.failedAt - a.letter.failedAt);
    return { items: matching.slice(0, limit), total: matching.length };
  }

  async stop(): Promise<void> { await this.follower?.stop(); }
}
