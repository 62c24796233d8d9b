import assert from 'node:assert/strict';
import { test } from 'node:test';
import { seeded } from '../../seeded-random.js';
import { zipf } from './many-destinations.js';

test('zipf: rank r drawn about 1 ÷ (r + 1) as often as rank 0, every rank in range, the same draws for the same seed', () => {
  const draw = zipf(1000, seeded(1));
  const counts = new Array<number>(1000).fill(0);
  for (let i = 0; i < 200_000; i++) counts[draw()]!++;
  assert.equal(counts.reduce((a, b) => a + b, 0), 200_000);
  assert.ok(Math.abs(counts[1]! / counts[0]! - 1 / 2) < 0.05, `rank 1: ${counts[1]! / counts[0]!}`);
  assert.ok(Math.abs(counts[9]! / counts[0]! - 1 / 10) < 0.02, `rank 9: ${counts[9]! / counts[0]!}`);
  assert.ok(counts[999]! > 0, 'the last rank is drawn too');
  const again = zipf(1000, seeded(1));
  const first = zipf(1000, seeded(1));
  assert.deepEqual(Array.from({ length: 50 }, () => again()), Array.from({ length: 50 }, () => first()));
});
