import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConcurrencyLimiter, KeyedLimiter } from './in-flight-limits.js';

/** Lets every already-resolved promise callback run. */
const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('ConcurrencyLimiter', () => {
  it('refuses a limit that is not a positive integer', () => {
    for (const bad of [0, -1, 1.5, Number.NaN, Infinity]) assert.throws(() => new ConcurrencyLimiter(bad), RangeError, String(bad));
  });

  it('tryAcquire takes free slots up to the limit', () => {
    const l = new ConcurrencyLimiter(2);
    assert.deepEqual([l.tryAcquire(), l.tryAcquire(), l.tryAcquire()], [true, true, false]);
    assert.equal(l.active, 2);
    l.release();
    assert.equal(l.active, 1);
    assert.equal(l.tryAcquire(), true);
  });

  it('acquire waits for a slot, and waiters are served first come, first served', async () => {
    const l = new ConcurrencyLimiter(1);
    await l.acquire();
    const served: number[] = [];
    const waits = [1, 2, 3].map((n) => l.acquire().then(() => served.push(n)));
    await settle();
    assert.deepEqual([l.active, l.waiting, served], [1, 3, []]);
    l.release();
    await settle();
    assert.deepEqual([l.active, l.waiting, served], [1, 2, [1]]);
    l.release();
    l.release();
    await Promise.all(waits);
    assert.deepEqual([l.active, l.waiting, served], [1, 0, [1, 2, 3]]);
    l.release();
    assert.equal(l.active, 0);
  });

  it('a newcomer cannot jump the queue with tryAcquire', async () => {
    const l = new ConcurrencyLimiter(1);
    assert.ok(l.tryAcquire());
    let waiterServed = false;
    const waiter = l.acquire().then(() => { waiterServed = true; });
    l.release(); // handed to the waiter
    assert.equal(l.tryAcquire(), false);
    await waiter;
    assert.ok(waiterServed);
  });

  it('release without acquire throws instead of raising the cap', () => {
    const l = new ConcurrencyLimiter(1);
    assert.throws(() => l.release());
  });

  it('stays FIFO through many waiters', async () => {
    const l = new ConcurrencyLimiter(3);
    const served: number[] = [];
    const all = Array.from({ length: 5_000 }, (_, i) => l.acquire().then(() => { served.push(i); l.release(); }));
    await Promise.all(all);
    assert.deepEqual(served, Array.from({ length: 5_000 }, (_, i) => i));
    assert.deepEqual([l.active, l.waiting], [0, 0]);
  });
});

describe('KeyedLimiter', () => {
  it('caps each key on its own, so one busy key does not block another', async () => {
    const k = new KeyedLimiter(2);
    await k.acquire('slow');
    await k.acquire('slow');
    let third = false;
    const pending = k.acquire('slow').then(() => { third = true; });
    await k.acquire('fast');
    await settle();
    assert.deepEqual([k.active('slow'), k.waiting('slow'), k.active('fast'), third], [2, 1, 1, false]);
    assert.equal(k.tryAcquire('slow'), false);
    k.release('slow');
    await pending;
    assert.equal(k.active('slow'), 2);
  });

  it('forgets keys with nothing active or waiting', async () => {
    const k = new KeyedLimiter(1);
    await k.acquire('a');
    assert.ok(k.tryAcquire('b'));
    assert.equal(k.size, 2);
    k.release('a');
    assert.deepEqual([k.size, k.active('a')], [1, 0]);
    k.release('b');
    assert.equal(k.size, 0);
  });

  it('a key with waiters is kept until the last one releases', async () => {
    const k = new KeyedLimiter(1);
    await k.acquire('a');
    const next = k.acquire('a');
    k.release('a');
    await next;
    assert.deepEqual([k.size, k.active('a')], [1, 1]);
    k.release('a');
    assert.equal(k.size, 0);
  });

  it('release of an unknown key throws', () => {
    assert.throws(() => new KeyedLimiter(1).release('nobody'));
  });
});
