import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { OffsetOutOfRangeError, type FetchedPartition, type PartitionSource } from './groupless-reader.js';
import { readPartitionRange } from './partition-range.js';

/** Answers fetches from a script: one entry per call (an answer, or an error to throw). */
function scripted(answers: Array<FetchedPartition | Error>): PartitionSource & { calls: bigint[]; recovered: number } {
  const calls: bigint[] = [];
  const source = {
    calls, recovered: 0,
    async partitions() { return [0]; },
    async earliestOffset() { return 0n; },
    async fetch(_partition: number, offset: bigint) {
      calls.push(offset);
      const next = answers.shift();
      if (!next) throw new Error('no more answers');
      if (next instanceof Error) throw next;
      return next;
    },
    async recover() { source.recovered++; },
    async close() {},
  };
  return source;
}
const rec = (offset: number) => ({ offset: String(offset), key: null, value: Buffer.from(String(offset)) });
const opts = { stopping: () => false, retryMinMs: 1 };

describe('readPartitionRange', () => {
  it('reads from the first offset to the last, inclusive, over several fetches, and leaves out what lies past it', async () => {
    const source = scripted([
      { records: [rec(5), rec(6)], nextOffset: 7n, endOffset: 20n },
      { records: [rec(8), rec(9), rec(10)], nextOffset: 11n, endOffset: 20n }, // 7: a transaction marker
    ]);
    const records = await readPartitionRange(source, 0, 5n, 9n, opts);
    assert.deepEqual(records.map((r) => r.offset), ['5', '6', '8', '9']);
    assert.deepEqual(source.calls, [5n, 7n]);
  });

  it('a failed fetch is tried again after a recovery; an empty answer below the end is never taken for the end', async () => {
    const source = scripted([
      new Error('leader moved'),
      { records: [], nextOffset: 3n, endOffset: 10n },
      { records: [rec(3), rec(4)], nextOffset: 5n, endOffset: 10n },
    ]);
    const retried: unknown[] = [];
    const records = await readPartitionRange(source, 0, 3n, 4n, { ...opts, onRetry: (err) => retried.push(err) });
    assert.deepEqual(records.map((r) => r.offset), ['3', '4']);
    assert.equal(source.recovered, 1);
    assert.equal(retried.length, 2);
  });

  it('ends at the stable end when the rest of the range held only aborted records', async () => {
    const source = scripted([{ records: [], nextOffset: 3n, endOffset: 3n }]);
    assert.deepEqual(await readPartitionRange(source, 0, 3n, 6n, opts), []);
  });

  it('a range no longer in the log throws OffsetOutOfRangeError; so does any failure once stopping', async () => {
    await assert.rejects(readPartitionRange(scripted([new OffsetOutOfRangeError(0)]), 0, 0n, 1n, opts), { name: 'OffsetOutOfRangeError' });
    await assert.rejects(readPartitionRange(scripted([]), 0, 0n, 1n, { ...opts, stopping: () => true }), /stopped/);
  });
});
