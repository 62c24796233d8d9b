import { randomUUID } from 'node:crypto';
import type { AvroCodec } from '@switchyard/platform/codec/avro-codec';
import { createConsumer, type Consumer, type Kafka } from '@switchyard/platform/kafka/client';
import type { Logger } from '@switchyard/platform/logger';
import { MessageTraces, type MessageTraceView } from './message-traces.js';

export interface MessageTraceIndexOptions {
  kafka: Kafka;
  codec: AvroCodec;
  /** The delivery-attempts topic. */
  topic: string;
  logger: Logger;
  /** Messages kept in memory (CONTROL_TRACE_INDEX_MAX). */
  max: number;
  /** How far back the index reaches (CONTROL_TRACE_WINDOW, 24 h). */
  windowMs: number;
  clock: () => number;
}

/**
 * The trace API's index: follows the delivery-attempts topic from `windowMs` ago (offsets looked up
 * by timestamp, so a restart reads one window, not the topic's 7 days) into a bounded in-memory
 * MessageTraces. Records older than the window are skipped; messages idle for longer than the window
 * are forgotten every minute; at most `max` messages are kept. Like every consumer of this topic it
 * is best-effort: an unreadable record is skipped.
 */
export class MessageTraceIndex {
  readonly traces: MessageTraces;
  private consumer: Consumer | undefined;
  private sweep: NodeJS.Timeout | undefined;

  constructor(private readonly opts: MessageTraceIndexOptions) {
    this.traces = new MessageTraces({ max: opts.max, windowMs: opts.windowMs });
  }

  get(messageId: string): MessageTraceView | undefined { return this.traces.get(messageId); }
  get max(): number { return this.opts.max; }
  get windowMs(): number { return this.opts.windowMs; }

  async start(): Promise<void> {
    const { kafka, topic, codec, logger } = this.opts;
    const since = this.opts.clock() - this.opts.windowMs;
    const admin = kafka.admin();
    await admin.connect();
    let offsets: Array<{ partition: number; offset: string }>;
    try {
      offsets = await admin.fetchTopicOffsetsByTimestamp(topic, since);
    } finally {
      await admin.disconnect();
    }
    const consumer = createConsumer(kafka, { groupId: `switchyard.trace-index.${randomUUID()}`, maxWaitTimeInMs: 500 });
    this.consumer = consumer;
    await consumer.connect();
    await consumer.subscribe({ topic, fromBeginning: true });
    // A record is applied once even if the seek below lands after a first fetch from the beginning.
    const applied = new Map<number, bigint>();
    await consumer.run({
      autoCommit: false,
      eachBatch: async ({ batch }) => {
        const cutoff = this.opts.clock() - this.opts.windowMs;
        for (const message of batch.messages) {
          const offset = BigInt(message.offset);
          if (offset <= (applied.get(batch.partition) ?? -1n)) continue;
          applied.set(batch.partition, offset);
          const ts = Number(message.timestamp);
          if (ts < cutoff) continue;
          try {
            const decoded = await codec.decode(message.value);
            if (decoded.name === 'io.switchyard.pipeline.DeliveryAttempt') this.traces.addAttempt(decoded.value, ts);
            else if (decoded.name === 'io.switchyard.pipeline.FanoutTrace') this.traces.addFanout(decoded.value, ts);
          } catch (err) {
            logger.warn({ err, partition: batch.partition, offset: message.offset }, 'unreadable trace record skipped');
          }
        }
      },
    });
    // Start at the window: seeks after run() apply before the partitions are fetched.
    for (const { partition, offset } of offsets) consumer.seek({ topic, partition, offset });
    this.sweep = setInterval(() => this.traces.expire(this.opts.clock()), 60_000);
    this.sweep.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.sweep);
    await this.consumer?.disconnect();
  }
}
