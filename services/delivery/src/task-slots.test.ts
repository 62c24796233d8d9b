import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { TaskSlots } from './task-slots.js';

describe('TaskSlots', () => {
  const slotsOf = (stopping = () => false) => new TaskSlots({ maxInFlight: 2, maxInFlightPerDestination: 1, maxWaitingPerDestination: 2, stopping });

  it('whenIdle() resolves once the last unfinished task ended, however it held its slot', async () => {
    const slots = slotsOf();
    await slots.whenIdle();
    assert.ok(slots.global.tryAcquire());
    slots.taskStarted();
    slots.taskStarted(); // a deferral: no global slot
    let idle = false;
    void slots.whenIdle().then(() => { idle = true; });
    slots.finished();
    await new Promise((r) => setImmediate(r));
    assert.equal(idle, false);
    assert.equal(slots.global.active, 0, 'finished() gave the global slot back');
    slots.taskEnded();
    await new Promise((r) => setImmediate(r));
    assert.equal(idle, true);
    assert.equal(slots.unfinished, 0);
  });

  it('a global slot obtained after shutdown began is given back', async () => {
    let stopping = false;
    const slots = slotsOf(() => stopping);
    assert.ok(slots.global.tryAcquire());
    assert.ok(slots.global.tryAcquire());
    const waited = slots.acquireUnlessStopping();
    stopping = true;
    slots.global.release();
    assert.equal(await waited, false);
    assert.equal(slots.global.active, 1);
  });

  it('a destination is full once its request slots are taken and its queue is full', async () => {
    const slots = slotsOf();
    assert.ok(slots.perDestination.tryAcquire('d1'));
    assert.equal(slots.destinationFull('d1'), false);
    const queued = [slots.perDestination.acquire('d1'), slots.perDestination.acquire('d1')];
    assert.equal(slots.destinationFull('d1'), true);
    assert.equal(slots.destinationFull('d2'), false);
    slots.perDestination.release('d1');
    assert.equal(slots.destinationFull('d1'), false);
    slots.perDestination.release('d1');
    slots.perDestination.release('d1');
    await Promise.all(queued);
  });

  it('deferrals have as many slots of their own as the global ones', () => {
    const slots = slotsOf();
    assert.ok(slots.global.tryAcquire() && slots.global.tryAcquire());
    assert.ok(slots.deferrals.tryAcquire() && slots.deferrals.tryAcquire());
    assert.equal(slots.deferrals.tryAcquire(), false);
  });
});
