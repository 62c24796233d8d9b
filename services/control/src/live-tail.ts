import { randomUUID } from 'node:crypto';
import type { AvroCodec } from '@switchyard/platform/codec/avro-codec';
import type { ConsumerClient } from '@switchyard/platform/consuming/consumer-client';
import { ConsumerRunner } from '@switchyard/platform/consuming/consumer-runner';
import { LIVE_TAIL_GROUP_PREFIX } from '@switchyard/platform/kafka/groups';
import type { Logger } from '@switchyard/platform/logger';
import { Counter, Gauge, type Registry } from '@switchyard/platform/metrics';
import { keyMayBelongTo, liveCall, type LiveCall } from './live-call.js';

/** One viewer of a source's live calls (the debugger's SSE stream). */
export interface LiveSubscriber {
  sourceId: string;
  /** The tail reads from the end of the topic now: every call accepted from here on will arrive. */
  onReady(): void;
  onCall(call: LiveCall): void;
  /** The tail stopped for good (shutdown, or the consumer failed and will not restart). */
  onEnd(reason: 'shutdown' | 'consumer_failed'): void;
}

export interface LiveTailOptions {
  /** A new member of the consumer group named (each start of the tail makes a group of its own). */
  newConsumer: (groupId: string) => ConsumerClient;
  codec: AvroCodec;
  /** The ingest topic. */
  topic: string;
  logger: Logger;
  metrics: Registry;
  /** How long the consumer outlives its last viewer (a viewer switching sources reuses it). */
  idleStopMs?: number;
  maxSubscribers?: number;
}

export class LiveTailFullError extends Error {}

/**
 * The debugger's live feed: the ingest topic read from its latest offsets by a consumer that exists
 * only while someone watches. The first viewer starts it (a group of its own, nothing committed,
 * so it never affects the pipeline's groups); when the last one leaves it stops after
 * `idleStopMs`, so the control service reads nothing at all when nobody watches. While running it
 * fetches every ingest record but decodes only those whose key (`sourceId:user`) belongs to a
 * watched source. Calls are handed to subscribers synchronously; each one buffers and drops on its
 * own (see LiveBuffer), so a slow viewer never holds the consumer back.
 */
export class LiveTail {
  private readonly subscribers = new Set<LiveSubscriber>();
  private readonly logger: Logger;
  private runner: ConsumerRunner | undefined;
  private ready = false;
  private stopped = false;
  private idleTimer: NodeJS.Timeout | undefined;
  /** Starts and stops run one after another, never interleaved. */
  private transitions: Promise<void> = Promise.resolve();
  readonly metrics: { subscribers: Gauge; running: Gauge; calls: Counter; dropped: Counter };

  constructor(private readonly opts: LiveTailOptions) {
    this.logger = opts.logger.child({ component: 'live-tail' });
    const registers = [opts.metrics];
    this.metrics = {
      subscribers: new Gauge({ name: 'control_live_subscribers', help: 'Open debugger live streams', registers }),
      running: new Gauge({ name: 'control_live_consumer_running', help: '1 while the live tail consumer reads the ingest topic', registers }),
      calls: new Counter({ name: 'control_live_calls_total', help: 'Calls decoded by the live tail for a watched source', registers }),
      dropped: new Counter({ name: 'control_live_dropped_total', help: 'Calls dropped from a viewer\'s full buffer (the viewer is told)', registers }),
    };
  }

  get subscriberCount(): number { return this.subscribers.size; }
  get running(): boolean { return this.runner !== undefined; }

  /** Adds a viewer; returns its unsubscribe function. Throws LiveTailFullError over the limit. */
  subscribe(subscriber: LiveSubscriber): () => void {
    if (this.stopped) throw new LiveTailFullError('the service is shutting down');
    if (this.subscribers.size >= (this.opts.maxSubscribers ?? 50)) throw new LiveTailFullError('too many open live streams');
    this.subscribers.add(subscriber);
    this.metrics.subscribers.set(this.subscribers.size);
    clearTimeout(this.idleTimer);
    if (this.ready) queueMicrotask(() => subscriber.onReady());
    this.reconcile();
    let subscribed = true;
    return () => {
      if (!subscribed) return;
      subscribed = false;
      this.subscribers.delete(subscriber);
      this.metrics.subscribers.set(this.subscribers.size);
      if (this.subscribers.size === 0) {
        clearTimeout(this.idleTimer);
        this.idleTimer = setTimeout(() => this.reconcile(), this.opts.idleStopMs ?? 5000);
        this.idleTimer.unref();
      }
    };
  }

  /** Ends every stream (each is told why) and stops the consumer. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.idleTimer);
    this.endAll('shutdown');
    this.reconcile();
    await this.transitions;
  }

  private reconcile(): void {
    this.transitions = this.transitions.then(async () => {
      const wanted = !this.stopped && this.subscribers.size > 0;
      if (wanted && !this.runner) await this.startConsumer();
      else if (!wanted && this.runner) await this.stopConsumer();
    }).catch((err: unknown) => {
      this.logger.error({ err }, 'live tail consumer failed to start or stop');
      void this.stopConsumer().catch(() => undefined);
      this.endAll('consumer_failed');
    });
  }

  private async startConsumer(): Promise<void> {
    const client = this.opts.newConsumer(`${LIVE_TAIL_GROUP_PREFIX}${randomUUID()}`);
    const runner = new ConsumerRunner({ client, topics: [this.opts.topic], from: 'latest', commits: 'none', logger: this.logger });
    this.runner = runner;
    this.ready = false;
    let joined = false;
    client.on('assigned', () => { joined = true; });
    // The first fetch after joining comes after the latest offsets were resolved: from then on
    // nothing accepted is missed, which is what a viewer waiting for "live" needs to know.
    client.on('fetched', () => {
      if (!joined || this.ready || this.runner !== runner) return;
      this.ready = true;
      for (const s of [...this.subscribers]) s.onReady();
    });
    client.on('crashed', (err, restarting) => {
      if (restarting) return;
      this.logger.error({ err }, 'live tail consumer crashed');
      this.endAll('consumer_failed');
      this.reconcile();
    });
    this.metrics.running.set(1);
    this.logger.info({ subscribers: this.subscribers.size }, 'live tail started');
    await runner.start(async (batch) => {
      const watched = new Set([...this.subscribers].map((s) => s.sourceId));
      if (watched.size === 0) return;
      for (const message of batch.messages) {
        if (!keyMayBelongTo(message.key, watched)) continue;
        let call: LiveCall | undefined;
        let sourceId: unknown;
        try {
          const decoded = await this.opts.codec.decode(message.value);
          sourceId = (decoded.value as { sourceId?: unknown }).sourceId;
          call = liveCall(decoded);
        } catch (err) {
          this.logger.debug({ err, partition: batch.partition, offset: message.offset }, 'undecodable ingest record skipped');
          continue;
        }
        if (!call) continue;
        this.metrics.calls.inc();
        for (const s of this.subscribers) if (s.sourceId === sourceId) s.onCall(call);
      }
    });
  }

  private async stopConsumer(): Promise<void> {
    const runner = this.runner;
    this.runner = undefined;
    this.ready = false;
    this.metrics.running.set(0);
    if (!runner) return;
    await runner.stop();
    this.logger.info('live tail stopped');
  }

  private endAll(reason: 'shutdown' | 'consumer_failed'): void {
    const all = [...this.subscribers];
    this.subscribers.clear();
    this.metrics.subscribers.set(0);
    for (const s of all) s.onEnd(reason);
  }
}
