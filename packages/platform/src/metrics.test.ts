import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Counter, Registry, initialiseCounter } from './metrics.js';

describe('initialiseCounter', () => {
  it('exports a 0 series for every combination of the label values, and later increments add to them', async () => {
    const registry = new Registry();
    const counter = new Counter({ name: 'x_total', help: 'x', labelNames: ['reason', 'tier'], registers: [registry] });
    initialiseCounter(counter, { reason: ['a', 'b'], tier: [1, 2, 3] });
    counter.inc({ reason: 'b', tier: 2 });
    const { values } = await counter.get();
    assert.equal(values.length, 6);
    assert.deepEqual(values.filter((v) => v.value !== 0).map((v) => v.labels), [{ reason: 'b', tier: 2 }]);
  });

  it('with a label given no values there is nothing to start', async () => {
    const counter = new Counter({ name: 'y_total', help: 'y', labelNames: ['reason'], registers: [] });
    initialiseCounter(counter, { reason: [] });
    assert.equal((await counter.get()).values.length, 0);
  });
});
