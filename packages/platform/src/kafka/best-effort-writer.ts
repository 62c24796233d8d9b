import type { Kafka, Message, Producer } from '../kafkajs/index.js';
import { JavaCompatiblePartitioner } from './partitioner.js';
import type { Logger } from '../logger.js';

export interface BestEffortWriterOptions<T> {
  topic: string;
  /** Turns a batch of items into the Kafka records of one produce request (e.g. one record for all). */
  toMessages: (items: T[]) => Message[];
  /** Items kept while Kafka is slow or away; beyond this the oldest are dropped. */
  maxBuffered?: number;
  /** Items per produce request. */
  maxBatch?: number;
  /** A partial batch leaves after this long. */
  lingerMs?: number;
  logger: Logger;
  onWritten?: (records: number) => void;
  onDropped?: (reason: 'overflow' | 'send_failed', records: number) => void;
}

/**
 * Fire-and-forget records for observability (delivery attempts): `write` only appends an item to a
 * bounded buffer and returns (encoding happens at send time, once per batch); a timer sends the buffer every `lingerMs` (or at once when a batch is
 * full) with acks=1, one produce request at a time, from a producer of its own. So it can never
 * delay or fail the caller: a slow or absent Kafka fills the buffer, the oldest records are dropped
 * and counted, a failed send is dropped and counted. Losing trace records is acceptable; slowing
 * the pipeline is not.
 */
export class BestEffortWriter<T> {
  private buffer: T[] = [];
  /** Index of the oldest unsent record in `buffer` (a cheap queue: no shift per record). */
  private head = 0;
  private sending = false;
  private timer: NodeJS.Timeout | undefined;
  private soon = false;
  private readonly maxBuffered: number;
  private readonly maxBatch: number;
  private readonly lingerMs: number;
  private lastFailureLog = 0;

  constructor(private readonly producer: Pick<Producer, 'send'>, private readonly opts: BestEffortWriterOptions<T>) {
    this.maxBuffered = opts.maxBuffered ?? 50_000;
    this.maxBatch = opts.maxBatch ?? 1000;
    this.lingerMs = opts.lingerMs ?? 100;
  }

  /** A producer for best-effort records: not idempotent (acks=1 is allowed), murmur2 like the others. */
  static producer(kafka: Kafka): Producer {
    return kafka.producer({ allowAutoTopicCreation: false, createPartitioner: JavaCompatiblePartitioner, retry: { retries: 2, initialRetryTime: 100 } });
  }

  start(): void {
    this.timer = setInterval(() => void this.flush(false), this.lingerMs);
    this.timer.unref();
  }

  get buffered(): number { return this.buffer.length - this.head; }

  write(item: T): void {
    this.buffer.push(item);
    const over = this.buffered - this.maxBuffered;
    if (over > 0) {
      this.head += over;
      this.opts.onDropped?.('overflow', over);
    }
    this.compact();
    if (this.buffered >= this.maxBatch && !this.sending && !this.soon) {
      this.soon = true;
      setImmediate(() => { this.soon = false; void this.flush(false); });
    }
  }

  /**
   * Sends what is buffered, one batch after another; returns when the buffer is empty or a send
   * failed. With `all` false (the linger timer, a full batch) it sends what is buffered now and then
   * only full batches: what arrived during a send waits for the next tick, instead of going out at
   * once as a produce request of its own — at delivery's rates, one request per broker round trip
   * with a few dozen records each, where a tick's worth fits in one or two.
   */
  async flush(all = true): Promise<void> {
    if (this.sending) return;
    this.sending = true;
    try {
      for (let first = true; all || first ? this.buffered > 0 : this.buffered >= this.maxBatch; first = false) {
        const batch = this.buffer.slice(this.head, this.head + this.maxBatch);
        this.head += batch.length;
        this.compact();
        try {
          await this.producer.send({ topic: this.opts.topic, acks: 1, messages: this.opts.toMessages(batch) });
          this.opts.onWritten?.(batch.length);
        } catch (err) {
          this.opts.onDropped?.('send_failed', batch.length);
          const now = Date.now();
          if (now - this.lastFailureLog > 10_000) {
            this.lastFailureLog = now;
            this.opts.logger.warn({ err, topic: this.opts.topic, records: batch.length }, 'best-effort records dropped: the send failed');
          }
          return;
        }
      }
    } finally {
      this.sending = false;
    }
  }

  /** Stops the timer and sends what is left, waiting at most `timeoutMs`. */
  async close(timeoutMs = 2000): Promise<void> {
    clearInterval(this.timer);
    const deadline = Date.now() + timeoutMs;
    while (this.buffered > 0 && Date.now() < deadline) {
      await Promise.race([this.flush(), new Promise((r) => setTimeout(r, Math.max(0, deadline - Date.now())))]);
      if (this.sending) await new Promise((r) => setTimeout(r, 20));
    }
  }

  private compact(): void {
    if (this.head > 1024 && this.head * 2 > this.buffer.length) {
      this.buffer = this.buffer.slice(this.head);
      this.head = 0;
    }
  }
}
