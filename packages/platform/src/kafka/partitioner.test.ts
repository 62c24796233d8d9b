import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { Partitioners, type PartitionerArgs } from '../kafkajs/index.js';
import { JavaCompatiblePartitioner, murmur2 } from './partitioner.js';

const args = (key: Buffer | string | null, partitions: number, leaders: number[] = []): PartitionerArgs => ({
  topic: 't',
  partitionMetadata: Array.from({ length: partitions }, (_, partitionId) => ({ partitionId, leader: leaders.includes(partitionId) ? -1 : 0, partitionErrorCode: 0, replicas: [0], isr: [0] })),
  message: { key, value: null },
});

describe('murmur2 and the Java-compatible partitioner', () => {
  it("Kafka's own murmur2 vectors (Java client UtilsTest)", () => {
    assert.equal(murmur2('21'), -973932308);
    assert.equal(murmur2('foobar'), -790332482);
    assert.equal(murmur2('a-little-bit-long-string'), -985981536);
    assert.equal(murmur2('a-little-bit-longer-string'), -1486304829);
    assert.equal(murmur2('lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8'), -58897971);
    assert.equal(murmur2(Buffer.from('abc')), 479470107);
  });

  it("puts every key on the partition kafkajs's DefaultPartitioner chooses: random bytes, ASCII, UTF-8, every length 0-64, 1-64 partitions", () => {
    const theirs = Partitioners.DefaultPartitioner();
    const ours = JavaCompatiblePartitioner();
    const keys: Array<Buffer | string> = [];
    for (let n = 0; n <= 64; n++) keys.push(randomBytes(n), `src_${'x'.repeat(n)}`, `é${'ü'.repeat(n % 7)}:用户-${n}`);
    for (let n = 0; n < 2000; n++) keys.push(`src_32c6d02ccbe6:user-${n}`, randomBytes(1 + (n % 40)));
    for (const key of keys) {
      for (const partitions of [1, 3, 6, 64]) {
        assert.equal(ours(args(key, partitions)), theirs(args(key, partitions)), `key ${typeof key === 'string' ? key : key.toString('hex')}, ${partitions} partitions`);
      }
    }
  });

  it('a record naming its partition goes there; records without a key go round robin over the partitions with a leader', () => {
    const ours = JavaCompatiblePartitioner();
    assert.equal(ours({ ...args('k', 3), message: { key: 'k', value: null, partition: 2 } }), 2);
    const chosen = new Set(Array.from({ length: 30 }, () => ours(args(null, 4, [1]))));
    assert.deepEqual([...chosen].sort(), [0, 2, 3], 'partition 1 has no leader');
    const counts = [0, 0, 0];
    for (let n = 0; n < 30; n++) counts[ours(args(null, 3))]!++;
    assert.deepEqual(counts, [10, 10, 10]);
  });
});
