import type { Producer } from '../kafkajs/index.js';
import { recordBytes, topicMessages } from '../kafka/batching-producer.js';

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

/** Records per produce request inside a transaction... */
const CHUNK_RECORDS = 500;
/**
 * ...and bytes (keys, values, headers): kafkajs writes one partition's records of a request as one
 * record batch, which the broker refuses, for good, above the topic's `max.message.bytes` (1 MB by
 * default). Fan-out reads up to 1 MB of a partition at once and writes a task for each destination
 * of each event, so large events to several destinations passed it: the batch was read again, failed
 * the same way, and its partition stopped (test/fanout.test.ts, "a burst of large events").
 */
const CHUNK_BYTES = 512 * 1024;
/** What a record adds to its batch beyond key, value and headers, at most (length fields, timestamp and offset deltas, attributes). */
const RECORD_FRAMING_BYTES = 32;

/**
 * Writes records and the consumer positions given in one Kafka transaction (the exactly-once
 * consume → produce → commit step of fan-out and audiences, through PartitionTransactions, and of
 * replays). On any failure the transaction is aborted and the error rethrown: nothing of it becomes
 * visible to read_committed readers, and the caller reads its input again.
 */
export async function commitInTransaction(producer: Producer, records: TransactionRecord[], positions: ConsumedPosition[] = []): Promise<void> {
  const txn = await producer.transaction();
  try {
    for (const chunk of produceChunks(records)) {
      await txn.sendBatch({ acks: -1, topicMessages: topicMessages(chunk) });
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

/** The records in order, cut into produce requests of at most CHUNK_RECORDS records and CHUNK_BYTES (a larger record alone). */
export function produceChunks(records: TransactionRecord[]): TransactionRecord[][] {
  const chunks: TransactionRecord[][] = [];
  let chunk: TransactionRecord[] = [];
  let bytes = 0;
  for (const r of records) {
    const size = recordBytes(r) + RECORD_FRAMING_BYTES;
    if (chunk.length > 0 && (chunk.length === CHUNK_RECORDS || bytes + size > CHUNK_BYTES)) {
      chunks.push(chunk);
      chunk = [];
      bytes = 0;
    }
    chunk.push(r);
    bytes += size;
  }
  if (chunk.length > 0) chunks.push(chunk);
  return chunks;
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
