import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { AvroCodec } from '../codec/avro-codec.js';
import { PositionLog, type PositionSource } from './position-log.js';

type Entry = { kind: 'position'; next: number } | { kind: 'aborted'; next: number } | { kind: 'marker' };

/** JSON for Avro: the log's own logic is under test, not the codec. */
const codec = {
  encode: (_name: string, value: unknown) => Buffer.from(JSON.stringify(value)),
  decode: async (bytes: Buffer) => ({ name: 'io.switchyard.pipeline.ConsumedPosition', value: JSON.parse(bytes.toString()), schemaId: 1 }),
} as unknown as Pick<AvroCodec, 'encode' | 'decode'>;

/**
 * One partition as read_committed sees it: `entries` from offset `earliest` on (compaction may have
 * removed the ones below); a fetch returns at most `perFetch` entries, aborted records and markers
 * left out of its records but counted in its next offset.
 */
function source(entries: Entry[], { earliest = 0, perFetch = 3, partition = 2 } = {}): PositionSource & { fetches: bigint[] } {
  const end = BigInt(earliest + entries.length);
  const fetches: bigint[] = [];
  const value = (next: number) => Buffer.from(JSON.stringify({ topic: 'in', partition, next, committedAt: 0 }));
  return {
    fetches,
    earliestOffset: async () => BigInt(earliest),
    latestOffset: async () => end,
    fetch: async (_p, offset) => {
      fetches.push(offset);
      const from = Number(offset) - earliest;
      const slice = entries.slice(from, from + perFetch);
      const records = slice.flatMap((e, i) => (e.kind === 'position' ? [{ offset: String(earliest + from + i), key: Buffer.from(`p${partition}`), value: value(e.next) }] : []));
      return { records, nextOffset: offset + BigInt(slice.length), endOffset: end };
    },
  };
}

const log = (src: PositionSource) => new PositionLog({ topic: 'positions', inputTopic: 'in', source: src, codec, clock: () => 5 });
const committed = (next: number): Entry[] => [{ kind: 'position', next }, { kind: 'marker' }];
const aborted = (next: number): Entry[] => [{ kind: 'aborted', next }, { kind: 'marker' }];

describe('PositionLog: positions as records of the transactions', () => {
  it('writes the position to the input partition\'s own partition, keyed by it', () => {
    const record = log(source([])).record(4, '120');
    assert.equal(record.topic, 'positions');
    assert.equal(record.partition, 4);
    assert.equal(record.key, 'p4');
    assert.deepEqual(JSON.parse(record.value!.toString()), { topic: 'in', partition: 4, next: 120, committedAt: 5 });
  });

  it('an empty partition has no position', async () => {
    assert.equal(await log(source([])).latest(2), undefined);
    assert.equal(await log(source([], { earliest: 40 })).latest(2), undefined);
  });

  it('the last committed record is the position, read from just before the end', async () => {
    const src = source([...committed(10), ...committed(25), ...committed(31)]);
    assert.equal(await log(src).latest(2), 31n);
    assert.deepEqual(src.fetches, [0n, 3n], 'six entries: one window of eight from the beginning');
    const long = source(Array.from({ length: 50 }, (_, i) => committed(i + 1)).flat());
    assert.equal(await log(long).latest(2), 50n);
    assert.equal(long.fetches[0], 92n, 'only the last eight entries are read');
  });

  it('aborted transactions after it are looked past, however many', async () => {
    const src = source([...committed(10), ...committed(25), ...Array.from({ length: 30 }, () => aborted(99)).flat()]);
    assert.equal(await log(src).latest(2), 25n);
  });

  it('compaction: the earliest offset bounds the look back', async () => {
    const src = source([...committed(7), ...aborted(8), ...aborted(9)], { earliest: 1000 });
    assert.equal(await log(src).latest(2), 7n);
    assert.equal(await log(source([...aborted(8), ...aborted(9), ...aborted(10), ...aborted(11), ...aborted(12)], { earliest: 1000 })).latest(2), undefined);
  });

  it('a record of another partition or input topic is refused, never taken for a position', async () => {
    const src = source(committed(3), { partition: 5 });
    await assert.rejects(() => log(src).latest(2), /not this partition's position/);
  });
});
