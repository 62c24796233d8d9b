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
 * Writes records and the consumer positions given in one Kafka transaction (the exactly-once
 * consume → produce → commit step of fan-out and audiences). On any failure the transaction is
 * aborted and the error rethrown: nothing of it becomes visible to read_committed readers, and the
 * caller reads its input again.
 */
export async function commitInTransaction(producer: Producer, records: TransactionRecord[], positions: ConsumedPosition[] = []): Promise<void> {
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

interface PendingCommit { records: TransactionRecord[]; position: ConsumedPosition | undefined; resolve: () => void; reject: (err: unknown) => void }

/**
 * The transactional producer of an exactly-once stage: commits group together, and a producer a
 * failed transaction left unusable is replaced.
 *
 * Group commit. Each partition batch of a fetch asks for its commit; the first request is held until
 * the current turn of the event loop ends (setImmediate), so the batches of one fetch, processed
 * concurrently, share one transaction, and while a transaction is in flight every new request waits
 * for the next one. Light traffic: a batch commits at once, alone. Heavy traffic: one transaction
 * per fetch, whatever the partition count. A transaction's cost (about five round trips and the
 * commit markers) was paid per partition batch before, one after another: the largest part of
 * fan-out's latency at moderate rates (BENCHMARKS.md). All of a group's batches succeed or fail
 * together; a failure rejects each of them, and each partition is read again from its committed
 * offset.
 *
 * Replacement. A commit cut off by a broker SIGKILL can leave kafkajs's transaction state stuck in
 * COMMITTING: the producer can neither abort nor begin again ("Cannot call beginTransaction in state
 * COMMITTING"), and every later batch failed the same way (found by the broker fault suite,
 * RELIABILITY.md). After any failed transaction the producer is disconnected and a new one with the
 * same transactional id takes its place: its initProducerId bumps the epoch, which fences the old
 * producer and aborts whatever transaction it left open, so exactly-once holds. Transactions run one
 * at a time, so no other transaction can be in flight during the swap.
 */
export class TransactionalProducer {
  private producer: Producer;
  private replacing: Promise<void> | undefined;
  /** A replacement whose connect failed (the broker still away): connected before its first use. */
  private unconnected = false;
  private readonly pending: PendingCommit[] = [];
  private flushing = false;
  private scheduled = false;

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

  /**
   * Resolves once `records` and `position` are committed, in a transaction shared with the other
   * commits asked for meanwhile; rejects if that transaction failed (the producer is then replaced).
   */
  commit(records: TransactionRecord[], position?: ConsumedPosition): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.pending.push({ records, position, resolve, reject });
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.flushing || this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => { this.scheduled = false; void this.flush(); });
  }

  private async flush(): Promise<void> {
    const group = this.pending.splice(0);
    if (group.length === 0) return;
    this.flushing = true;
    try {
      await this.commitNow(group.flatMap((c) => c.records), group.flatMap((c) => (c.position ? [c.position] : [])));
      for (const c of group) c.resolve();
    } catch (err) {
      for (const c of group) c.reject(err);
    } finally {
      this.flushing = false;
      if (this.pending.length) this.schedule();
    }
  }

  private async commitNow(records: TransactionRecord[], positions: ConsumedPosition[]): Promise<void> {
    await this.replacing;
    try {
      if (this.unconnected) {
        await this.producer.connect();
        this.unconnected = false;
      }
      await commitInTransaction(this.producer, records, positions);
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
