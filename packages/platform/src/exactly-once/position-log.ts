import type { AvroCodec } from '../codec/avro-codec.js';
import type { FetchedPartition } from '../kafka/groupless-reader.js';
import type { TransactionRecord } from './transaction.js';

/** The reads a PositionLog makes of its topic: read_committed, straight from each partition's leader. */
export interface PositionSource {
  earliestOffset(partition: number): Promise<bigint>;
  /** The last stable offset: everything below it is committed or aborted. */
  latestOffset(partition: number): Promise<bigint>;
  fetch(partition: number, offset: bigint, maxWaitMs: number): Promise<FetchedPartition>;
}

export interface PositionLogOptions {
  /** The positions topic: one partition per input partition. */
  topic: string;
  /** The input topic whose positions are kept. */
  inputTopic: string;
  source: PositionSource;
  codec: Pick<AvroCodec, 'encode' | 'decode'>;
  clock: () => number;
}

/** The first look back from the end; doubled while it holds only aborted records. */
const FIRST_WINDOW = 8n;

/**
 * An exactly-once stage's consumed positions as records of its own transactions, instead of the
 * consumer group's transactional offset commit: a transaction then needs no AddOffsetsToTxn and
 * TxnOffsetCommit, two of its five round trips. Partition N of the
 * topic holds input partition N's positions and is written only under that partition's
 * transactional id, so once the id is fenced in (PartitionTransactions) no transaction of it is open
 * and the last committed record there is where the previous owner stopped.
 */
export class PositionLog {
  constructor(private readonly opts: PositionLogOptions) {}

  /** The record that moves `partition`'s position to `next`, written in the work's transaction. */
  record(partition: number, next: string): TransactionRecord {
    const value = this.opts.codec.encode('io.switchyard.pipeline.ConsumedPosition', {
      topic: this.opts.inputTopic, partition, next: Number(next), committedAt: this.opts.clock(),
    });
    return { topic: this.opts.topic, partition, key: `p${partition}`, value };
  }

  /**
   * The last committed position of `partition`, or undefined when none was ever written. Reads back
   * from the partition's end: the last record is the latest position unless aborted transactions
   * follow it, which read_committed leaves out, so the window doubles until a record turns up.
   */
  async latest(partition: number): Promise<bigint | undefined> {
    const { source } = this.opts;
    const [earliest, end] = await Promise.all([source.earliestOffset(partition), source.latestOffset(partition)]);
    for (let window = FIRST_WINDOW, to = end; to > earliest; window *= 2n) {
      const from = end - window > earliest ? end - window : earliest;
      const value = await this.lastValueIn(partition, from, to);
      if (value) return this.decode(partition, value);
      to = from;
    }
    return undefined;
  }

  /** The value of the last committed record in [from, to). */
  private async lastValueIn(partition: number, from: bigint, to: bigint): Promise<Buffer | undefined> {
    let last: Buffer | undefined;
    for (let at = from; at < to;) {
      const fetched = await this.opts.source.fetch(partition, at, 0);
      for (const r of fetched.records) if (BigInt(r.offset) < to && r.value) last = r.value;
      if (fetched.nextOffset <= at) break; // nothing more below the stable end
      at = fetched.nextOffset;
    }
    return last;
  }

  private async decode(partition: number, value: Buffer): Promise<bigint> {
    const decoded = await this.opts.codec.decode(value);
    if (decoded.name !== 'io.switchyard.pipeline.ConsumedPosition' || decoded.value.partition !== partition || decoded.value.topic !== this.opts.inputTopic) {
      throw new Error(`${this.opts.topic} partition ${partition} holds a record that is not this partition's position (${decoded.name})`);
    }
    return BigInt(decoded.value.next);
  }
}
