import type { Message, Producer } from 'kafkajs';
import type { Logger } from '../logger.js';

export interface TransactionRecord {
  topic: string;
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
        list.push(r.headers ? { key: r.key, value: r.value, headers: r.headers } : { key: r.key, value: r.value });
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

/**
 * The transactional producer of an exactly-once stage, replaced when a failed transaction leaves it
 * unusable. A commit cut off by a broker SIGKILL can leave kafkajs's transaction state stuck in
 * COMMITTING: the producer can neither abort nor begin again ("Cannot call beginTransaction in state
 * COMMITTING"), and every later batch failed the same way (found by the broker fault suite,
 * RELIABILITY.md). After any failed transaction the producer is disconnected and a new one with the
 * same transactional id takes its place: its initProducerId bumps the epoch, which fences the old
 * producer and aborts whatever transaction it left open, so exactly-once holds. Transactions run
 * one at a time (each stage consumes one partition batch at a time), so no other transaction can be
 * in flight during the swap.
 */
export class TransactionalProducer {
  private producer: Producer;
  private replacing: Promise<void> | undefined;
  /** A replacement whose connect failed (the broker still away): connected before its first use. */
  private unconnected = false;

  constructor(private readonly create: () => Producer, private readonly logger: Logger) {
    this.producer = create();
  }

  async connect(): Promise<void> {
    await this.producer.connect();
  }

  async disconnect(): Promise<void> {
    await this.replacing?.catch(() => undefined);
    await this.producer.disconnect();
  }

  /** commitInTransaction with the current producer; after a failure the producer is replaced, then the error rethrown. */
  async commit(records: TransactionRecord[], position?: ConsumedPosition): Promise<void> {
    await this.replacing;
    try {
      if (this.unconnected) {
        await this.producer.connect();
        this.unconnected = false;
      }
      await commitInTransaction(this.producer, records, position);
    } catch (err) {
      this.replacing ??= this.replace().finally(() => { this.replacing = undefined; });
      throw err;
    }
  }

  private async replace(): Promise<void> {
    const old = this.producer;
    this.producer = this.create();
    this.unconnected = true;
    await old.disconnect().catch(() => undefined);
    try {
      await this.producer.connect();
      this.unconnected = false;
      this.logger.warn('transactional producer replaced after a failed transaction');
    } catch (err) {
      // The broker is still away: the next commit tries to connect again, or fails and replaces again.
      this.logger.warn({ err }, 'connecting the replacement transactional producer failed');
    }
  }
}
