import { randomUUID } from 'node:crypto';
import type { AvroCodec } from '@switchyard/platform/codec/avro-codec';
import { createConsumer, type Kafka } from '@switchyard/platform/kafka/client';
import type { Logger } from '@switchyard/platform/logger';
import type { AudienceUserState } from '@switchyard/platform/schemas/generated';
import type { AudienceMetrics } from './audience-metrics.js';

export interface ChangelogOptions {
  kafka: Kafka;
  codec: AvroCodec;
  topic: string;
  logger: Logger;
  metrics: AudienceMetrics;
  apply: (key: string, partition: number, value: AudienceUserState | null) => void;
  /** How long catching up one partition may take before the caller gives up (and tries again later). */
  catchUpTimeoutMs?: number;
}

export interface Changelog {
  /**
   * Resolves once this instance has read `partition` of the changelog up to its current end: call it
   * after fencing the partition in, when no transaction of a previous owner can still be open on it.
   */
  catchUp(partition: number): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Reads the state changelog from the beginning and resolves once it reached the end offsets it saw
 * at start; keeps following it afterwards, so state written by other instances is current when
 * partitions move here, and `catchUp` waits for a moved partition's last writes. Read committed:
 * state from aborted transactions never appears. Positions come from kafkajs's batch events, which
 * also report batches that held only transaction markers (the end offset after a commit is its
 * marker's offset + 1, a record no handler sees).
 */
export async function restoreChangelog({ kafka, codec, topic, logger, metrics, apply, catchUpTimeoutMs = 30_000 }: ChangelogOptions): Promise<Changelog> {
  const admin = kafka.admin();
  await admin.connect();
  const positions = new Map<number, bigint>();
  const waiters = new Set<{ partition: number; end: bigint; resolve: () => void }>();
  /** Partitions with records to read, and where each ends now. */
  const endsNow = async (): Promise<Map<number, bigint>> => {
    const ends = new Map<number, bigint>();
    for (const o of await admin.fetchTopicOffsets(topic)) if (BigInt(o.high) > BigInt(o.low)) ends.set(o.partition, BigInt(o.high));
    return ends;
  };
  const reached = (partition: number, end: bigint): Promise<void> => {
    if ((positions.get(partition) ?? -1n) >= end) return Promise.resolve();
    return new Promise((resolve) => { waiters.add({ partition, end, resolve }); });
  };

  let ends: Map<number, bigint>;
  try {
    ends = await endsNow();
  } catch (err) {
    await admin.disconnect();
    throw err;
  }
  const remaining = () => [...ends].reduce((n, [p, end]) => n + Math.max(0, Number(end - (positions.get(p) ?? 0n))), 0);
  metrics.changelogLag.set(remaining());
  const consumer = createConsumer(kafka, { groupId: `switchyard.audiences-changelog.${randomUUID()}`, maxWaitTimeInMs: 500 });
  consumer.on(consumer.events.END_BATCH_PROCESS, ({ payload }) => {
    if (payload.topic !== topic) return;
    positions.set(payload.partition, BigInt(payload.lastOffset) + 1n);
    for (const w of waiters) {
      if (w.partition === payload.partition && BigInt(payload.lastOffset) + 1n >= w.end) { waiters.delete(w); w.resolve(); }
    }
  });
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  await consumer.run({
    autoCommit: false,
    eachBatch: async ({ batch }) => {
      for (const message of batch.messages) {
        const key = message.key?.toString('utf8');
        if (!key) continue;
        if (message.value === null) { apply(key, batch.partition, null); continue; }
        try {
          const decoded = await codec.decode(message.value);
          if (decoded.name === 'io.switchyard.pipeline.AudienceUserState') apply(key, batch.partition, decoded.value);
        } catch (err) {
          logger.warn({ err, key }, 'unreadable state record skipped');
        }
      }
    },
  });
  const progress = setInterval(() => metrics.changelogLag.set(remaining()), 1000);
  await Promise.all([...ends].map(([p, end]) => reached(p, end)));
  clearInterval(progress);
  metrics.changelogLag.set(0);
  return {
    async catchUp(partition) {
      const end = (await endsNow()).get(partition);
      if (end === undefined) return;
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`changelog partition ${partition} not read to offset ${end} within ${catchUpTimeoutMs} ms`)), catchUpTimeoutMs);
      });
      try {
        await Promise.race([reached(partition, end), timeout]);
      } finally {
        clearTimeout(timer);
      }
    },
    async stop() {
      await consumer.disconnect();
      await admin.disconnect();
    },
  };
}
