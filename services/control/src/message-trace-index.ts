import type { AvroCodec } from '@switchyard/platform/codec/avro-codec';
import type { Kafka } from '@switchyard/platform/kafka/client';
import { followTopic } from '@switchyard/platform/kafka/topic-follower';
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
  private follower: { stop(): Promise<void> } | undefined;
  private sweep: NodeJS.Timeout | undefined;

  constructor(private readonly opts: MessageTraceIndexOptions) {
    this.traces = new MessageTraces({ max: opts.max, windowMs: opts.windowMs });
  }

  get(messageId: string): MessageTraceView | undefined { return this.traces.get(messageId); }
  get max(): number { return this.opts.max; }
  get windowMs(): number { return this.opts.windowMs; }

  async start(): Promise<void> {
    this.follower = await followTopic({
      ...this.opts, label: 'trace-index', from: { timestamp: this.opts.clock() - this.opts.windowMs },
      onRecord: (decoded, { timestamp }) => {
        if (timestamp < this.opts.clock() - this.opts.windowMs) return;
        if (decoded.name !== 'io.switchyard.pipeline.TraceRecords') return;
        for (const f of decoded.value.fanouts) this.traces.addFanout(f, timestamp);
        for (const a of decoded.value.attempts) this.traces.addAttempt(a, timestamp);
        for (const d of decoded.value.deferrals) this.traces.addDeferral(d, timestamp);
      },
    });
    this.sweep = setInterval(() => this.traces.expire(this.opts.clock()), 60_000);
    this.sweep.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.sweep);
    await this.follower?.stop();
  }
}
