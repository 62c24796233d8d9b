import type { Message, Producer } from 'kafkajs';

export interface TransactionRecord {
  topic: string;
  key: string | null;
  value: Buffer | null;
}

export interface ConsumedPosition {
  groupId: string;
  topic: string;
  partition: number;
  /** The next offset to read (last processed + 1). */
  offset: string;
}

/** Records per produce request inside a transaction, so no request nears the broker's size limit. */
const CHUNK = 500;

/**
 * Writes records and, when given, a consumer group's position in one Kafka transaction (the
 * exactly-once consume → produce → commit step of fan-out and audiences). On any failure the
 * transaction is aborted and the error rethrown: nothing of it becomes visible to read_committed
 * readers, and the caller reads its input again.
 */
export async function commitInTransaction(producer: Producer, records: TransactionRecord[], position?: ConsumedPosition): Promise<void> {
  const txn = await producer.transaction();
  try {
    for (let i = 0; i < records.length; i += CHUNK) {
      const byTopic = new Map<string, Message[]>();
      for (const r of records.slice(i, i + CHUNK)) {
        let list = byTopic.get(r.topic);
        if (!list) byTopic.set(r.topic, (list = []));
        list.push({ key: r.key, value: r.value });
      }
      await txn.sendBatch({ acks: -1, topicMessages: [...byTopic].map(([topic, messages]) => ({ topic, messages })) });
    }
    if (position) {
      await txn.sendOffsets({ consumerGroupId: position.groupId, topics: [{ topic: position.topic, partitions: [{ partition: position.partition, offset: position.offset }] }] });
    }
    await txn.commit();
  } catch (err) {
    await txn.abort().catch(() => undefined);
    throw err;
  }
}
