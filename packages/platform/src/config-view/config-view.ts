import { randomUUID } from 'node:crypto';
import { EventEmitter } from 'node:events';
import type { AvroCodec } from '../codec/avro-codec.js';
import { createConsumer, type Consumer, type Kafka } from '../kafka/client.js';
import type { Logger } from '../logger.js';
import { ConfigState, type ConfigRecord } from './config-state.js';

export interface ConfigViewOptions {
  kafka: Kafka;
  codec: AvroCodec;
  topic: string;
  logger: Logger;
  /** Names the view's consumer group, for operators reading group lists. */
  owner: string;
}

/**
 * Follows the compacted config topic: reads it from the beginning at start (`start()` resolves once
 * every partition is caught up to where it ended at start-up), then keeps applying changes as they
 * arrive, so every service sees a change within moments and without a restart. Each process reads
 * the whole topic under a consumer group of its own and commits nothing: the topic is the state.
 * Emits 'change' after each applied batch.
 */
export class ConfigView extends EventEmitter<{ change: [ConfigState] }> {
  readonly state = new ConfigState();
  private consumer: Consumer | undefined;
  private readonly log: Logger;
  /** Per key, the offset of a record this process wrote and applied before reading it back. */
  private readonly writtenOffsets = new Map<string, bigint>();

  constructor(private readonly opts: ConfigViewOptions) {
    super();
    this.log = opts.logger.child({ component: 'config-view' });
  }

  async start(): Promise<void> {
    const { kafka, topic } = this.opts;
    const admin = kafka.admin();
    await admin.connect();
    let ends: Map<number, bigint>;
    try {
      const offsets = await admin.fetchTopicOffsets(topic);
      ends = new Map(offsets.filter((o) => BigInt(o.high) > BigInt(o.low)).map((o) => [o.partition, BigInt(o.high)]));
    } finally {
      await admin.disconnect();
    }

    // A short fetch wait keeps disconnect (which waits for the current long poll) quick on shutdown.
    const consumer = createConsumer(kafka, { groupId: `switchyard.config-view.${this.opts.owner}.${randomUUID()}`, sessionTimeout: 30_000, heartbeatInterval: 3000, maxWaitTimeInMs: 500 });
    this.consumer = consumer;
    await consumer.connect();
    await consumer.subscribe({ topic, fromBeginning: true });

    let caughtUp!: () => void;
    const ready = new Promise<void>((resolve) => { caughtUp = resolve; });
    if (ends.size === 0) caughtUp();

    await consumer.run({
      autoCommit: false,
      eachBatch: async ({ batch, heartbeat }) => {
        for (const message of batch.messages) {
          const key = message.key?.toString('utf8') ?? '';
          const written = this.writtenOffsets.get(key);
          if (written !== undefined) {
            // Older records of a key this process already wrote would briefly undo its own write.
            if (BigInt(message.offset) < written) continue;
            this.writtenOffsets.delete(key);
          }
          const record = message.value ? await this.decode(key, message.value) : null;
          if (message.value && !record) continue;
          this.state.apply(key, record);
        }
        await heartbeat();
        const end = ends.get(batch.partition);
        if (end !== undefined && BigInt(batch.lastOffset()) + 1n >= end) {
          ends.delete(batch.partition);
          if (ends.size === 0) caughtUp();
        }
        this.emit('change', this.state);
      },
    });
    await ready;
    this.log.info({ sources: this.state.sources().length, destinations: this.state.destinations().length }, 'configuration loaded');
  }

  /**
   * Read-your-writes for the writer: applies a record this process just wrote (acknowledged at
   * `offset`) at once, instead of when the consumer reaches it.
   */
  applyWritten(key: string, record: ConfigRecord | null, offset: string): void {
    this.state.apply(key, record);
    this.writtenOffsets.set(key, BigInt(offset));
    this.emit('change', this.state);
  }

  /** Resolves when the predicate holds for the state (checked now and after every change). */
  waitFor(predicate: (state: ConfigState) => boolean, timeoutMs = 10_000): Promise<void> {
    if (predicate(this.state)) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const onChange = () => { if (predicate(this.state)) { cleanup(); resolve(); } };
      const timer = setTimeout(() => { cleanup(); reject(new Error(`configuration did not reach the expected state within ${timeoutMs} ms`)); }, timeoutMs);
      const cleanup = () => { clearTimeout(timer); this.off('change', onChange); };
      this.on('change', onChange);
    });
  }

  async stop(): Promise<void> {
    await this.consumer?.disconnect();
  }

  private async decode(key: string, value: Buffer): Promise<ConfigRecord | null> {
    try {
      const decoded = await this.opts.codec.decode(value);
      if (decoded.name === 'io.switchyard.config.Source') return { kind: 'source', value: decoded.value };
      if (decoded.name === 'io.switchyard.config.Destination') return { kind: 'destination', value: decoded.value };
      if (decoded.name === 'io.switchyard.config.Audience') return { kind: 'audience', value: decoded.value };
      if (decoded.name === 'io.switchyard.config.ComputedTrait') return { kind: 'computed-trait', value: decoded.value };
      this.log.error({ key, schema: decoded.name }, 'unexpected record type on the config topic; skipped');
    } catch (err) {
      this.log.error({ key, err }, 'undecodable config record; skipped');
    }
    return null;
  }
}
