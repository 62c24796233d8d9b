import { randomUUID } from 'node:crypto';
import type { AvroCodec, Decoded } from '../codec/avro-codec.js';
import { RegistryUnavailableError } from '../errors.js';
import { ConsumerRunner } from '../consuming/consumer-runner.js';
import type { Logger } from '../logger.js';
import type { Kafka } from './client.js';
import { kafkajsConsumer } from './kafkajs-consumer.js';
import { followerGroupPrefix, type FollowerLabel } from './groups.js';

export interface RecordMeta { partition: number; offset: string; timestamp: number }

export interface FollowTopicOptions {
  kafka: Kafka;
  codec: AvroCodec;
  topic: string;
  logger: Logger;
  /** Names the throwaway consumer group (`switchyard.<label>.<uuid>`) and the log lines. */
  label: FollowerLabel;
  /** Where to start: the first record, or the first record written at or after a time (ms). */
  from: 'beginning' | { timestamp: number };
  /** Called once per decodable record, in offset order per partition. Tombstones are skipped. */
  onRecord: (decoded: Decoded, meta: RecordMeta) => void;
}

/** A record whose writer schema the registry did not answer for is read again this much later. */
const REGISTRY_RETRY_MS = 1000;

/**
 * Follows one topic into memory for an in-process index: a consumer group of its own that commits
 * nothing (every start reads again from `from`), Avro decoding, and an unreadable record logged and
 * skipped rather than stopping the index; a registry that did not answer says nothing of a record,
 * which is read again a second later. Resolves once the consumer runs; `stop` disconnects.
 */
export async function followTopic(opts: FollowTopicOptions): Promise<{ stop(): Promise<void> }> {
  const { kafka, codec, topic, logger, label, onRecord } = opts;
  const startOffsets = opts.from === 'beginning' ? [] : await offsetsAt(kafka, topic, opts.from.timestamp);
  const client = kafkajsConsumer(kafka, { groupId: `${followerGroupPrefix(label)}${randomUUID()}`, maxWaitTimeInMs: 500 }, logger);
  const runner = new ConsumerRunner({ client, topics: [topic], from: 'earliest', commits: 'none', logger });
  // A record is applied once even if a seek below lands after a first fetch from the beginning.
  const applied = new Map<number, bigint>();
  await runner.start(async (batch) => {
    for (const message of batch.messages) {
      const offset = BigInt(message.offset);
      if (offset <= (applied.get(batch.partition) ?? -1n)) continue;
      if (message.value !== null) {
        try {
          onRecord(await codec.decode(message.value), { partition: batch.partition, offset: message.offset, timestamp: Number(message.timestamp) });
        } catch (err) {
          if (err instanceof RegistryUnavailableError) {
            runner.readAgainLater({ topic, partition: batch.partition, offset: message.offset }, REGISTRY_RETRY_MS);
            return;
          }
          logger.warn({ err, topic, partition: batch.partition, offset: message.offset, index: label }, 'unreadable record skipped');
        }
      }
      applied.set(batch.partition, offset);
    }
  });
  // Seeks made after the start apply before the partitions are first fetched.
  for (const { partition, offset } of startOffsets) runner.seek({ topic, partition, offset });
  return { stop: () => runner.stop() };
}

async function offsetsAt(kafka: Kafka, topic: string, timestamp: number): Promise<Array<{ partition: number; offset: string }>> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    return await admin.fetchTopicOffsetsByTimestamp(topic, timestamp);
  } finally {
    await admin.disconnect();
  }
}
