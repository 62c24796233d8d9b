import { setTimeout as sleep } from 'node:timers/promises';
import type { FetchedRecord, PartitionSource } from './groupless-reader.js';

export interface RangeReadOptions {
  /** Checked before each fetch and each wait: true ends the read with an error (shutdown). */
  stopping: () => boolean;
  /** Told of each failed fetch before it is tried again. */
  onRetry?: (err: unknown) => void;
  /** After a failed fetch, wait from this long doubling up to 2 s. */
  retryMinMs?: number;
}

/**
 * The committed records of one partition from `from` to `to` (both inclusive), fetched from the
 * partition's leader without a consumer group (read_committed: aborted and control records left
 * out). Records are read already: the range is never past the partition's stable end. A failed fetch
 * is tried again (after a metadata refresh) until it succeeds, except OffsetOutOfRangeError (the
 * range is gone: retention or a recreated topic), which is thrown, as is any error once stopping.
 */
export async function readPartitionRange(source: PartitionSource, partition: number, from: bigint, to: bigint, opts: RangeReadOptions): Promise<FetchedRecord[]> {
  const records: FetchedRecord[] = [];
  let position = from;
  let delay = opts.retryMinMs ?? 100;
  while (position <= to) {
    if (opts.stopping()) throw new Error('stopped while reading a partition range');
    let fetched;
    try {
      fetched = await source.fetch(partition, position, 100);
    } catch (err) {
      if ((err as Error).name === 'OffsetOutOfRangeError' || opts.stopping()) throw err;
      opts.onRetry?.(err);
      await source.recover(err);
      await sleep(delay);
      delay = Math.min(delay * 2, 2000);
      continue;
    }
    for (const record of fetched.records) if (BigInt(record.offset) <= to) records.push(record);
    if (fetched.nextOffset > position) {
      position = fetched.nextOffset;
      delay = opts.retryMinMs ?? 100;
      continue;
    }
    // Nothing at or past the stable end: the rest of the range held only markers or aborted records.
    if (fetched.endOffset <= position) break;
    // An empty answer below the end (a leader moving): never taken for the end of the range.
    opts.onRetry?.(new Error(`empty fetch at offset ${position} below the partition end ${fetched.endOffset}`));
    await sleep(delay);
    delay = Math.min(delay * 2, 2000);
  }
  return records;
}
