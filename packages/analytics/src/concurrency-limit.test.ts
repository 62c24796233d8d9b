import assert from 'node:assert/strict';
import { it } from 'node:test';
import { ConcurrencyLimit } from './concurrency-limit.js';

it('runs at most max tasks at once, the rest in arrival order, and passes results and errors through', async () => {
  const limit = new ConcurrencyLimit(2);
  let active = 0;
  let peak = 0;
  const started: number[] = [];
  const task = (i: number) => async () => {
    started.push(i);
    active++;
    peak = Math.max(peak, active);
    await new Promise((r) => setTimeout(r, 5));
    active--;
    if (i === 3) throw new Error('three');
    return i;
  };
  const results = await Promise.allSettled([0, 1, 2, 3, 4, 5].map((i) => limit.run(task(i))));
  assert.equal(peak, 2);
  assert.deepEqual(started, [0, 1, 2, 3, 4, 5]);
  assert.deepEqual(results.map((r) => (r.status === 'fulfilled' ? r.value : (r.reason as Error).message)), [0, 1, 2, 'three', 4, 5]);
  assert.equal(await limit.run(async () => 'free again'), 'free again');
});
