import type { Message, Producer } from '../kafkajs/index.js';

export interface OutgoingRecord {
  topic: string;
  key: string | null;
  value: Buffer | null;
  headers?: Record<string, string>;
}

/**
 * The bytes a record adds to a send: value, key, header names and values (Kafka's few bytes of
 * framing per record aside). Send and request limits count these, so a send stays within one
 * record batch of the broker's default 1 MiB.
 */
export function recordBytes(r: OutgoingRecord): number {
  let n = (r.value?.length ?? 0) + (r.key === null ? 0 : Buffer.byteLength(r.key));
  if (r.headers) for (const name in r.headers) n += name.length + r.headers[name]!.length;
  return n;
}

/** Records as kafkajs's sendBatch takes them: one entry per topic, in order, a record's partition kept when it names one. */
export function topicMessages(records: Iterable<OutgoingRecord & { partition?: number }>): Array<{ topic: string; messages: Message[] }> {
  const byTopic = new Map<string, Message[]>();
  for (const r of records) {
    let list = byTopic.get(r.topic);
    if (!list) byTopic.set(r.topic, (list = []));
    const message: Message = r.headers ? { key: r.key, value: r.value, headers: r.headers } : { key: r.key, value: r.value };
    if (r.partition !== undefined) message.partition = r.partition;
    list.push(message);
  }
  return [...byTopic].map(([topic, messages]) => ({ topic, messages }));
}

export interface BatchingProducerOptions {
  /** A batch closes at this many records or bytes; the rest waits for the next send. */
  maxBatchRecords?: number;
  maxBatchBytes?: number;
  /** Called after each send with its size and duration (metrics). */
  onSend?: (info: { records: number; bytes: number; seconds: number; error?: unknown }) => void;
}

interface Pending {
  records: OutgoingRecord[];
  bytes: number;
  cancelled: boolean;
  resolve: () => void;
  reject: (err: unknown) => void;
}

/** A handle on records given to the batcher: resolves once Kafka acknowledged all of them. */
export interface Submission {
  acked: Promise<void>;
  /** Withdraws the records if their batch has not started sending; returns whether it did. */
  cancel(): boolean;
}

/**
 * Groups the records of many concurrent callers into few Kafka produce requests (acks=all).
 * Adaptive, like Nagle: when nothing is being sent, a submission goes out at once; while a send
 * is in flight, new submissions accumulate and leave together when it returns. Low load gets low
 * latency, high load gets large batches, and no fixed linger is needed. A caller's records always
 * travel in one send, so each caller learns one outcome for all of them.
 */
export class BatchingProducer {
  private queue: Pending[] = [];
  private sending = false;
  private scheduled = false;
  private readonly maxRecords: number;
  private readonly maxBytes: number;

  constructor(private readonly producer: Producer, private readonly opts: BatchingProducerOptions = {}) {
    this.maxRecords = opts.maxBatchRecords ?? 10_000;
    this.maxBytes = opts.maxBatchBytes ?? 4 * 1024 * 1024;
  }

  submit(records: OutgoingRecord[]): Submission {
    let entry!: Pending;
    const acked = new Promise<void>((resolve, reject) => {
      const bytes = records.reduce((n, r) => n + recordBytes(r), 0);
      entry = { records, bytes, cancelled: false, resolve, reject };
    });
    if (records.length === 0) { entry.resolve(); return { acked, cancel: () => false }; }
    this.queue.push(entry);
    this.schedule();
    return {
      acked,
      cancel: () => {
        const i = this.queue.indexOf(entry);
        if (i < 0) return false;
        this.queue.splice(i, 1);
        entry.cancelled = true;
        return true;
      },
    };
  }

  /** Records waiting for a send. */
  get queued(): number { return this.queue.reduce((n, e) => n + e.records.length, 0); }

  private schedule(): void {
    if (this.sending || this.scheduled) return;
    this.scheduled = true;
    // Let the submissions of this event-loop turn join the batch.
    setImmediate(() => { this.scheduled = false; void this.flush(); });
  }

  private async flush(): Promise<void> {
    if (this.sending || this.queue.length === 0) return;
    this.sending = true;
    const batch: Pending[] = [];
    let records = 0;
    let bytes = 0;
    while (this.queue.length > 0) {
      const next = this.queue[0]!;
      if (batch.length > 0 && (records + next.records.length > this.maxRecords || bytes + next.bytes > this.maxBytes)) break;
      batch.push(this.queue.shift()!);
      records += next.records.length;
      bytes += next.bytes;
    }
    const t0 = process.hrtime.bigint();
    try {
      await this.producer.sendBatch({ acks: -1, topicMessages: topicMessages(batch.flatMap((entry) => entry.records)) });
      this.opts.onSend?.({ records, bytes, seconds: Number(process.hrtime.bigint() - t0) / 1e9 });
      for (const entry of batch) entry.resolve();
    } catch (error) {
      this.opts.onSend?.({ records, bytes, seconds: Number(process.hrtime.bigint() - t0) / 1e9, error });
      for (const entry of batch) entry.reject(error);
    } finally {
      this.sending = false;
      if (this.queue.length > 0) this.schedule();
    }
  }
}
