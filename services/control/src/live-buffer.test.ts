import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { LiveBuffer } from './live-buffer.js';

describe('LiveBuffer', () => {
  it('hands over everything pending, in arrival order', () => {
    const b = new LiveBuffer<number>(3);
    b.push(1);
    b.push(2);
    assert.deepEqual(b.take(), { items: [1, 2], dropped: 0 });
    assert.deepEqual(b.take(), { items: [], dropped: 0 });
  });

  it('when full, drops the oldest and counts them until the next take', () => {
    const b = new LiveBuffer<number>(2);
    for (const n of [1, 2, 3, 4, 5]) b.push(n);
    assert.equal(b.size, 2);
    assert.deepEqual(b.take(), { items: [4, 5], dropped: 3 });
    b.push(6);
    assert.deepEqual(b.take(), { items: [6], dropped: 0 });
  });

  it('with a time, when full, drops the oldest by that time rather than the first to arrive; hands over in arrival order', () => {
    // receivedAt of calls that reached the consumer out of order (partitions are read one after another).
    const b = new LiveBuffer<{ receivedAt: number }>(3, (c) => c.receivedAt);
    for (const receivedAt of [879, 874, 865, 883, 851]) b.push({ receivedAt });
    assert.deepEqual(b.take(), { items: [{ receivedAt: 879 }, { receivedAt: 874 }, { receivedAt: 883 }], dropped: 2 });
  });

  it('refuses a capacity that is not a positive integer', () => {
    assert.throws(() => new LiveBuffer(0), RangeError);
    assert.throws(() => new LiveBuffer(1.5), RangeError);
  });
});
