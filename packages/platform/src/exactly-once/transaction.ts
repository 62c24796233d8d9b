import type { Message, Producer } from '../kafkajs/index.js';

export interface TransactionRecord {
  topic: string;
  /** Absent: the producer's partitioner places the record by its key. */
  partition?: number;
  key: string | null;
  value: Buffer | null;
  headers?: Readonly<Record<string, string>>;
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
 * Writes records and the consumer positions given in one Kafka transaction (the exactly-once
 * consume → produce → commit step of fan-out and audiences, through PartitionTransactions, and of
 * replays). On any failure the transaction is aborted and the error rethrown: nothing of it becomes
 * visible to read_committed readers, and the caller reads its input again.
 */
export async function commitInTransaction(producer: Producer, records: TransactionRecord[], positions: ConsumedPosition[] = []): Promise<void> {
  const txn = await producer.transaction();
  try {
    for (let i = 0; i < records.length; i += CHUNK) {
      const byTopic = new Map<string, Message[]>();
      for (const r of records.slice(i, i + CHUNK)) {
        let list = byTopic.get(r.topic);
        if (!list) byTopic.set(r.topic, (list = []));
        const message: Message = r.headers ? { key: r.key, value: r.value, headers: r.headers } : { key: r.key, value: r.value };
        if (r.partition !== undefined) message.partition = r.partition;
        list.push(message);
      }
      await txn.sendBatch({ acks: -1, topicMessages: [...byTopic].map(([topic, messages]) => ({ topic, messages })) });
    }
    for (const [groupId, topics] of groupPositions(positions)) {
      await txn.sendOffsets({ consumerGroupId: groupId, topics: [...topics].map(([topic, partitions]) => ({ topic, partitions })) });
    }
    await txn.commit();
  } catch (err) {
    await txn.abort().catch(() => undefined);
    throw err;
  }
}

/** group → topic → partitions; a partition given twice keeps its furthest offset. */
function groupPositions(positions: ConsumedPosition[]): Map<string, Map<string, Array<{ partition: number; offset: string }>>> {
  const groups = new Map<string, Map<string, Array<{ partition: number; offset: string }>>>();
  for (const p of positions) {
    let topics = groups.get(p.groupId);
    if (!topics) groups.set(p.groupId, (topics = new Map()));
    let partitions = topics.get(p.topic);
    if (!partitions) topics.set(p.topic, (partitions = []));
    const same = partitions.find((x) => x.partition === p.partition);
    if (!same) partitions.push({ partition: p.partition, offset: p.offset });
    else if (BigInt(p.offset) > BigInt(same.offset)) same.offset = p.offset;
  }
  return groups;
}
