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
}

/**
 * Reads the state changelog from the beginning and resolves once it reached the end offsets it saw
 * at start; keeps following it afterwards, so state written by other instances (and this one's own
 * writes, which the version check ignores) is current when partitions move here. Read committed:
 * state from aborted transactions never appears.
 */
export async function restoreChangelog({ kafka, codec, topic, logger, metrics, apply }: ChangelogOptions): Promise<{ stop(): Promise<void> }> {
  const admin = kafka.admin();
  await admin.connect();
  const ends = new Map<number, bigint>();
  try {
    for (const o of await admin.fetchTopicOffsets(topic)) if (BigInt(o.high) > BigInt(o.low)) ends.set(o.partition, BigInt(o.high));
  } finally {
    await admin.disconnect();
  }
  const remaining = () => [...ends.values()].reduce((n, v) => n + Number(v), 0);
  metrics.changelogLag.set(remaining());
  const consumer = createConsumer(kafka, { groupId: `switchyard.audiences-changelog.${randomUUID()}`, maxWaitTimeInMs: 500 });
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  let done!: () => void;
  const restored = new Promise<void>((resolve) => { done = resolve; });
  if (ends.size === 0) done();
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
      const end = ends.get(batch.partition);
      if (end === undefined) return;
      const next = BigInt(batch.lastOffset()) + 1n;
      const finish = () => {
        if (!ends.delete(batch.partition)) return;
        metrics.changelogLag.set(remaining());
        if (ends.size === 0) done();
      };
      if (next >= end) finish();
      // Transactional writes end with a commit marker, which a batch of its own never reports:
      // one offset short of the end and nothing more arriving means caught up.
      else if (next + 1n >= end) setTimeout(finish, 1000);
    },
  });
  await restored;
  metrics.changelogLag.set(0);
  return { stop: () => consumer.disconnect() };
}
