import type { Admin, Producer } from '../kafkajs/index.js';
import type { Logger } from '../logger.js';
import type { GroupOffsetCommitter } from './group-offset-committer.js';
import type { PositionLog } from './position-log.js';
import { commitInTransaction, type TransactionRecord } from './transaction.js';

// The transactional id of one input partition of an exactly-once stage (named with the others in kafka/groups.ts).
export { partitionTransactionalId } from '../kafka/groups.js';

export interface PartitionTransactionsOptions {
  /** The consumer group whose offsets the transactions commit, and the topic it reads. */
  groupId: string;
  topic: string;
  /** A new transactional producer for one input partition, under that partition's transactional id. */
  createProducer: (partition: number) => Producer;
  /** The group's committed offset of an input partition (the next offset to read), or undefined when none. */
  committedOffset: (partition: number) => Promise<bigint | undefined>;
  /**
   * Where positions are committed, if not in the group: a record of each transaction in `log`
   * (position-log.ts), and the furthest of it and the group's offset is where a new owner starts.
   * The group's offset then follows, committed positions only, through `groupOffsets` (for lag).
   */
  positions?: {
    log: Pick<PositionLog, 'record' | 'latest'>;
    groupOffsets: Pick<GroupOffsetCommitter, 'note' | 'retain'>;
  };
  /**
   * Runs once a partition is fenced in, before its first batch (audiences: catch up the partition's
   * state, which the previous owner's last transaction may have just completed).
   */
  onAcquired?: (partition: number) => Promise<void>;
  /** Runs when a partition is given up (lost in a rebalance, a failed transaction, shutdown): drop its state. */
  onReleased?: (partition: number) => void;
  logger: Logger;
  /** Counts each time a partition is fenced in (after a rebalance, a restart, or a failed transaction). */
  onFence?: (partition: number) => void;
}

/** What the owner of an input partition may do with it: commit, and know where its predecessor stopped. */
export interface PartitionLease {
  readonly partition: number;
  /**
   * The first offset not yet committed (startingPosition). Records below it were processed, by a previous
   * owner or by this one, and must be skipped: the consumer may have read its position before the
   * previous owner's last transaction completed.
   */
  readonly next: bigint | undefined;
  /** Writes `records`, and with `nextOffset` the stage's position on this partition, in one transaction. */
  commit(records: TransactionRecord[], nextOffset?: string): Promise<void>;
}

interface Held {
  producer: Producer;
  next: bigint | undefined;
}

/**
 * Exactly once across rebalances, without KIP-447 (kafkajs commits transactional offsets without the
 * group's generation, so the broker cannot refuse a commit from an instance that lost its partitions).
 * Every input partition has a transactional id of its own, as Kafka Streams had before KIP-447. Before
 * an instance processes a partition it *fences it in*: a new producer under the partition's id calls
 * InitProducerId, which bumps the id's epoch, so every earlier holder (a paused instance that lost the
 * partition and resumed, say) is refused on its next request, and its open transaction is aborted or,
 * if it was already committing, completed first. Only then is the committed position read (the
 * group's offset, or the furthest of it and the position log's): from that moment only this holder
 * can move it, so records below it are skipped (done already) and the rest processed once. A failed
 * transaction gives the partition up; the next batch fences it in again (which also replaces a
 * producer a broker crash left stuck) and reads the committed position again.
 * Work on one partition runs one piece at a time; partitions run side by side.
 */
export class PartitionTransactions {
  private readonly held = new Map<number, Held>();
  private readonly tails = new Map<number, Promise<unknown>>();
  /** The group's latest assignment to this instance (unknown before the first join). */
  private assigned: Set<number> | undefined;
  private closed = false;

  constructor(private readonly opts: PartitionTransactionsOptions) {}

  /**
   * Runs `work` as the fenced-in owner of `partition`, after any earlier work on it ended; skips it
   * (undefined) when the latest assignment no longer includes the partition: a batch fetched before a
   * rebalance belongs to the new owner, and fencing the partition in here would abort its work.
   */
  withPartition<T>(partition: number, work: (lease: PartitionLease) => Promise<T>): Promise<T | undefined> {
    return this.serialised(partition, async () => {
      if (this.closed) throw new Error('partition transactions closed');
      if (this.assigned && !this.assigned.has(partition)) return undefined;
      const held = this.held.get(partition) ?? (await this.acquire(partition));
      return work(this.leaseOf(partition, held));
    });
  }

  /**
   * The partitions the consumer group now assigns this instance. Partitions it lost are given up once
   * their work ends; new ones are fenced in at once, so their first batch does not wait for it.
   */
  assign(partitions: readonly number[]): void {
    const now = new Set(partitions);
    this.assigned = now;
    this.opts.positions?.groupOffsets.retain(partitions);
    for (const p of this.held.keys()) if (!now.has(p)) void this.serialised(p, () => this.release(p));
    for (const p of now) {
      if (this.held.has(p)) continue;
      this.withPartition(p, async () => undefined).catch((err: unknown) => this.opts.logger.warn({ err, partition: p }, 'fencing in a partition failed; its first batch tries again'));
    }
  }

  /** Partitions currently fenced in by this instance. */
  owned(): number[] {
    return [...this.held.keys()].sort((a, b) => a - b);
  }

  /** Gives every partition up once its work ended (graceful shutdown, after the consumer stopped). */
  async close(): Promise<void> {
    this.closed = true;
    // Partitions being fenced in right now too: they join `held` when that ends.
    const partitions = new Set([...this.held.keys(), ...this.tails.keys()]);
    await Promise.all([...partitions].map((p) => this.serialised(p, () => this.release(p)).catch(() => undefined)));
  }

  private leaseOf(partition: number, held: Held): PartitionLease {
    return {
      partition,
      get next() { return held.next; },
      commit: async (records, nextOffset) => {
        if (this.held.get(partition) !== held) throw new Error(`partition ${partition} is no longer held`);
        try {
          const { positions } = this.opts;
          if (nextOffset === undefined) await commitInTransaction(held.producer, records);
          else if (positions) await commitInTransaction(held.producer, [...records, positions.log.record(partition, nextOffset)]);
          else await commitInTransaction(held.producer, records, [{ groupId: this.opts.groupId, topic: this.opts.topic, partition, offset: nextOffset }]);
        } catch (err) {
          // Fenced by a new owner, or the broker went away: either way read the position again before going on.
          this.opts.logger.warn({ err, partition }, 'transaction failed; the partition is fenced in again before its next batch');
          await this.release(partition);
          throw err;
        }
        if (nextOffset !== undefined) {
          held.next = BigInt(nextOffset);
          this.opts.positions?.groupOffsets.note(partition, held.next);
        }
        this.opts.logger.debug({ partition, records: records.length, nextOffset }, 'transaction committed');
      },
    };
  }

  private async acquire(partition: number): Promise<Held> {
    const producer = this.opts.createProducer(partition);
    try {
      await producer.connect();
      // kafkajs sends InitProducerId with the first transaction; an empty one ends without EndTxn.
      const txn = await producer.transaction();
      await txn.abort();
      const next = await this.startingPosition(partition);
      if (next !== undefined) this.opts.positions?.groupOffsets.note(partition, next);
      try {
        await this.opts.onAcquired?.(partition);
      } catch (err) {
        this.opts.onReleased?.(partition); // whatever it restored before failing
        throw err;
      }
      const held: Held = { producer, next };
      this.held.set(partition, held);
      this.opts.onFence?.(partition);
      this.opts.logger.info({ partition, committedOffset: next?.toString() ?? null }, 'partition fenced in');
      return held;
    } catch (err) {
      await producer.disconnect().catch(() => undefined);
      throw err;
    }
  }

  /**
   * Where the fenced-in owner starts: the group's committed offset, or with a position log the
   * furthest of the two (the group's offset trails the log's by the caller's commit interval, and
   * is all there is for a partition no transaction of the log covered yet).
   */
  private async startingPosition(partition: number): Promise<bigint | undefined> {
    const [group, logged] = await Promise.all([this.opts.committedOffset(partition), this.opts.positions?.log.latest(partition)]);
    if (group === undefined) return logged;
    return logged !== undefined && logged > group ? logged : group;
  }

  private async release(partition: number): Promise<void> {
    const held = this.held.get(partition);
    if (!held) return;
    this.held.delete(partition);
    this.opts.onReleased?.(partition);
    await held.producer.disconnect().catch(() => undefined);
  }

  private serialised<T>(partition: number, work: () => Promise<T>): Promise<T> {
    const run = (this.tails.get(partition) ?? Promise.resolve()).then(work, work);
    const tail = run.catch(() => undefined);
    this.tails.set(partition, tail);
    void tail.then(() => { if (this.tails.get(partition) === tail) this.tails.delete(partition); });
    return run;
  }
}

/** The group's committed offsets of one topic, read with the admin client: the next offset per partition. */
export function committedOffsetReader(admin: Admin, groupId: string, topic: string): (partition: number) => Promise<bigint | undefined> {
  return async (partition) => (await committedOffsets(admin, groupId, [topic])).get(`${topic}:${partition}`);
}

/** The group's committed offsets of some topics, keyed `topic:partition`: partitions never committed are absent. */
export async function committedOffsets(admin: Admin, groupId: string, topics: string[]): Promise<Map<string, bigint>> {
  const offsets = new Map<string, bigint>();
  for (const { topic, partitions } of await admin.fetchOffsets({ groupId, topics })) {
    for (const { partition, offset } of partitions) if (BigInt(offset) >= 0n) offsets.set(`${topic}:${partition}`, BigInt(offset));
  }
  return offsets;
}

interface FetchedBatch<M extends { offset: string }> {
  topic: string;
  partition: number;
  messages: M[];
  lastOffset(): string;
}

/**
 * The records of a batch not yet committed under `lease`. The consumer may have read its start
 * position before the previous owner's last transaction completed, so a batch can begin below the
 * committed offset; when all of it is below, the consumer is sent straight on to that offset.
 */
export function uncommittedRecords<M extends { offset: string }>(batch: FetchedBatch<M>, lease: PartitionLease, seek: (position: { topic: string; partition: number; offset: string }) => void): M[] {
  const next = lease.next;
  if (next === undefined || batch.messages.length === 0 || BigInt(batch.messages[0]!.offset) >= next) return batch.messages;
  const rest = batch.messages.filter((m) => BigInt(m.offset) >= next);
  if (rest.length === 0 && BigInt(batch.lastOffset()) + 1n < next) seek({ topic: batch.topic, partition: batch.partition, offset: next.toString() });
  return rest;
}
