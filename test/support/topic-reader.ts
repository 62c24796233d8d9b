// Reads topics of a test pipeline from the beginning (read_committed), or from given offsets,
// decodes every record and keeps it, so tests can wait for what they expect and check that nothing
// else arrived.
import { randomUUID } from 'node:crypto';
import { AvroCodec, type Decoded } from '@switchyard/platform/codec/avro-codec';
import { createConsumer, type Consumer } from '@switchyard/platform/kafka/client';
import { testKafka, testStack } from './stack.js';

export interface ReadRecord {
  topic: string;
  partition: number;
  offset: string;
  key: string | null;
  /** Undefined when the value did not decode (raw bytes kept in `raw`). */
  decoded: Decoded | undefined;
  raw: Buffer | null;
}

/** Where each partition of these topics ends now (`topic:partition` → the next offset): a TopicReader's `from`. */
export async function topicEnds(topics: string[], brokers?: string): Promise<Map<string, bigint>> {
  const admin = testKafka('ends', brokers).admin();
  await admin.connect();
  try {
    const ends = new Map<string, bigint>();
    for (const topic of topics) {
      for (const { partition, high } of await admin.fetchTopicOffsets(topic)) ends.set(`${topic}:${partition}`, BigInt(high));
    }
    return ends;
  } finally {
    await admin.disconnect();
  }
}

export class TopicReader {
  readonly records: ReadRecord[] = [];
  private consumer: Consumer | undefined;
  private listeners = new Set<() => void>();
  /** topic/partition/offset of every record kept: a record read again (after a rebalance) is kept once. */
  private readonly seen = new Set<string>();

  /**
   * `from`: per `topic:partition`, the first offset to keep (topicEnds() before a scenario): the
   * records of earlier scenarios are neither fetched nor decoded. A fault suite's reader otherwise
   * decoded every earlier scenario's records as it started, in the process that also hosts the
   * receiver, which then answered seconds late and had its calls timed out and sent again.
   */
  constructor(private readonly topics: string[], private readonly brokers?: string, private readonly from?: ReadonlyMap<string, bigint>) {}

  async start(): Promise<this> {
    const codec = new AvroCodec({ registryUrl: testStack().registryUrl });
    // Run again after a crash kafkajs does not recover from (a broker killed under a fault suite).
    const consumer = createConsumer(testKafka('reader', this.brokers), { groupId: `test-reader-${randomUUID()}`, maxWaitTimeInMs: 100 });
    this.consumer = consumer;
    await consumer.connect();
    for (const topic of this.topics) await consumer.subscribe({ topic, fromBeginning: true });
    let joined!: () => void;
    const ready = new Promise<void>((resolve) => { joined = resolve; });
    consumer.on(consumer.events.GROUP_JOIN, ({ payload }) => {
      for (const [topic, partitions] of Object.entries(payload.memberAssignment)) {
        for (const partition of partitions) {
          const first = this.from?.get(`${topic}:${partition}`);
          if (first !== undefined) consumer.seek({ topic, partition, offset: String(first) });
        }
      }
      joined();
    });
    await consumer.run({
      eachMessage: async ({ topic, partition, message }) => {
        const first = this.from?.get(`${topic}:${partition}`);
        if (first !== undefined && BigInt(message.offset) < first) return;
        const at = `${topic}/${partition}/${message.offset}`;
        if (this.seen.has(at)) return;
        this.seen.add(at);
        let decoded: Decoded | undefined;
        try { decoded = await codec.decode(message.value); } catch { decoded = undefined; }
        this.records.push({ topic, partition, offset: message.offset, key: message.key?.toString() ?? null, decoded, raw: message.value });
        for (const l of this.listeners) l();
      },
    });
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => { timer = setTimeout(() => reject(new Error(`topic reader of ${this.topics.join(', ')}: not in its group after 60 s`)), 60_000); });
    try {
      await Promise.race([ready, timeout]);
    } catch (err) {
      await consumer.disconnect().catch(() => undefined);
      throw err;
    } finally {
      clearTimeout(timer);
    }
    return this;
  }

  /** Records of one topic whose decoded value satisfies the filter. */
  values<T = Record<string, unknown>>(topic: string, filter: (value: T, record: ReadRecord) => boolean = () => true): T[] {
    return this.records.filter((r) => r.topic === topic && r.decoded && filter(r.decoded.value as T, r)).map((r) => ({ ...(r.decoded!.value as object) }) as T);
  }

  async waitFor<T = Record<string, unknown>>(topic: string, filter: (value: T, record: ReadRecord) => boolean, count = 1, timeoutMs = 15_000): Promise<T[]> {
    const check = () => this.values<T>(topic, filter);
    if (check().length >= count) return check();
    return new Promise((resolve, reject) => {
      const listener = () => { const found = check(); if (found.length >= count) { cleanup(); resolve(found); } };
      const timer = setTimeout(() => { cleanup(); reject(new Error(`expected ${count} matching records on ${topic} within ${timeoutMs} ms, got ${check().length}`)); }, timeoutMs);
      const cleanup = () => { clearTimeout(timer); this.listeners.delete(listener); };
      this.listeners.add(listener);
    });
  }

  async stop(): Promise<void> {
    await this.consumer?.disconnect();
  }
}
