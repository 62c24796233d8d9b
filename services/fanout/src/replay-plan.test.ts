import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { chunkSize, isTerminal, mayBeTruncated, pauseFor, planPartitions, remaining } from './replay-plan.js';

describe('replay plan: ranges, truncation, rate', () => {
  it('each partition reads from the offset of `from` to that of `to`; "no such record" means the end of the log', () => {
    const plan = planPartitions([
      { partition: 1, from: 10n, to: 50n, low: 0n, high: 60n },
      { partition: 0, from: -1n, to: -1n, low: 0n, high: 7n },
      { partition: 2, from: 30n, to: 20n, low: 0n, high: 40n },
    ]);
    assert.deepEqual(plan.map((p) => [p.partition, p.start, p.end, p.next]), [[0, 7, 7, 7], [1, 10, 50, 10], [2, 30, 30, 30]]);
    assert.equal(remaining(plan), 40);
  });

  it('a range starting at the first retained record of a partition that lost records may be truncated', () => {
    const [p] = planPartitions([{ partition: 0, from: 200n, to: 500n, low: 200n, high: 900n }]);
    assert.equal(mayBeTruncated(p!, 200n), true);
    assert.equal(mayBeTruncated(p!, 0n), false);
    assert.equal(mayBeTruncated({ ...p!, start: 250 }, 200n), false);
  });

  it('the rate bound: how long to wait so that records over time stay under the rate', () => {
    assert.equal(pauseFor(1000, 500, 1000), 500);
    assert.equal(pauseFor(1000, 1500, 1000), 0);
    assert.deepEqual([chunkSize(1), chunkSize(1000), chunkSize(100_000)], [1, 200, 500]);
  });

  it('final states', () => {
    assert.deepEqual(['running', 'done', 'cancelled', 'failed'].map((state) => isTerminal({ state })), [false, true, true, true]);
    assert.equal(isTerminal(undefined), false);
  });
});
