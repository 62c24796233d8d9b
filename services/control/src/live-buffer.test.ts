import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { LiveBuffer } from './live-buffer.js';

describe('LiveBuffer', () => {
  it('hands over everything pending, oldest first', () => {
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

  it('refuses a capacity that is not a positive integer', () => {
    assert.throws(() => new LiveBuffer(0), RangeError);
    assert.throws(() => new LiveBuffer(1.5), RangeError);
  });
});
