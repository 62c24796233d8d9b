import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { taskPartition } from './task-partitions.js';

describe('taskPartition: each delivery partition written by one ingest partition', () => {
  it('equal counts: the ingest partition, whatever the key', () => {
    for (let p = 0; p < 6; p++) {
      for (const key of ['d1:u1', 'd2:u2', 'd3:']) assert.equal(taskPartition({ ingest: 6, delivery: 6 }, p, key), p);
    }
  });

  it('more delivery partitions: the ones congruent to the ingest partition, spread by key and stable per key', () => {
    const layout = { ingest: 3, delivery: 8 };
    const seen = new Map<number, Set<number>>();
    for (let p = 0; p < 3; p++) {
      const used = new Set<number>();
      for (let u = 0; u < 200; u++) {
        const key = `d1:user-${u}`;
        const q = taskPartition(layout, p, key);
        assert.equal(q % 3, p);
        assert.ok(q < 8);
        assert.equal(taskPartition(layout, p, key), q);
        used.add(q);
      }
      seen.set(p, used);
    }
    assert.deepEqual([...seen.get(0)!].sort(), [0, 3, 6]);
    assert.deepEqual([...seen.get(1)!].sort(), [1, 4, 7]);
    assert.deepEqual([...seen.get(2)!].sort(), [2, 5]);
  });

  it('fewer delivery partitions: shared, never out of range', () => {
    const layout = { ingest: 6, delivery: 4 };
    assert.deepEqual([0, 1, 2, 3, 4, 5].map((p) => taskPartition(layout, p, 'k')), [0, 1, 2, 3, 0, 1]);
  });

  it('an ingest partition added after start-up still gets a partition in range', () => {
    assert.equal(taskPartition({ ingest: 3, delivery: 3 }, 4, 'k'), 1);
    const q = taskPartition({ ingest: 3, delivery: 9 }, 4, 'k');
    assert.equal(q % 3, 1);
    assert.ok(q < 9);
  });
});
