import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { TokenBucket } from './token-bucket.js';

/** Reserves as fast as allowed from `start` for `ms`, with reservations up to `maxWaitMs` ahead; returns the send times. */
function saturate(bucket: TokenBucket, start: number, ms: number, maxWaitMs: number, step = 1): number[] {
  const sends: number[] = [];
  for (let now = start; now < start + ms; now += step) {
    for (let at = bucket.reserve(now, maxWaitMs); at !== undefined; at = bucket.reserve(now, maxWaitMs)) sends.push(at);
  }
  return sends;
}

function busiestWindow(sends: number[], windowMs: number): number {
  const sorted = [...sends].sort((a, b) => a - b);
  let most = 0;
  for (let i = 0, j = 0; i < sorted.length; i++) {
    while (sorted[i]! - sorted[j]! >= windowMs) j++;
    most = Math.max(most, i - j + 1);
  }
  return most;
}

describe('TokenBucket', () => {
  it('starts full: an idle destination gets its burst at once, then one token per 1/rate', () => {
    const b = new TokenBucket(10, 2, 0);
    assert.equal(b.reserve(0, 0), 0);
    assert.equal(b.reserve(0, 0), 0);
    assert.equal(b.reserve(0, 0), undefined, 'no wait allowed, no token left: nothing taken');
    assert.equal(b.reserve(0, 1000), 100);
    assert.equal(b.reserve(0, 1000), 200);
  });

  it('refuses a reservation further ahead than the wait allowed, and takes nothing then', () => {
    const b = new TokenBucket(10, 1, 0);
    b.reserve(0, 0);
    assert.equal(b.reserve(0, 99), undefined);
    assert.equal(b.reservedAheadMs(0), 0);
    assert.equal(b.reserve(0, 100), 100);
    assert.equal(b.reservedAheadMs(0), 100);
  });

  it('refills up to its capacity only, however long it was idle', () => {
    const b = new TokenBucket(10, 3, 0);
    for (let i = 0; i < 3; i++) b.reserve(0, 0);
    const atOnce = [1, 2, 3, 4, 5].map(() => b.reserve(60_000, 0));
    assert.deepEqual(atOnce, [60_000, 60_000, 60_000, undefined, undefined]);
  });

  it('saturated for a minute, no 10 s window holds more than rate × 10 s + capacity', () => {
    const b = new TokenBucket(20, 2, 0);
    const sends = saturate(b, 0, 60_000, 1000, 7);
    assert.ok(busiestWindow(sends, 10_000) <= 20 * 10 + 2, `busiest 10 s window: ${busiestWindow(sends, 10_000)}`);
    assert.ok(sends.length >= 20 * 60, `${sends.length} sends in a minute at 20/s`);
  });

  it('a lower rate applies from the change, and tokens reserved ahead at the old one are not handed out again', () => {
    const b = new TokenBucket(10, 1, 0);
    const before = saturate(b, 0, 1, 1000);
    assert.equal(before.at(-1), 1000);
    b.setRate(1, 1, 1);
    // The debt (10 tokens reserved ahead) is paid back at 1/s first.
    assert.equal(b.reserve(1, 1000), undefined);
    assert.ok(b.reserve(1, 20_000)! >= 10_000);
  });

  it('a rate of 0 (no partition held) sends nothing, and rising again starts from what is left', () => {
    const b = new TokenBucket(0, 1, 0);
    b.reserve(0, 0);
    assert.equal(b.reserve(5000, 60_000), undefined);
    b.setRate(10, 1, 5000);
    assert.equal(b.reserve(5000, 1000), 5100);
  });

  it('a clock that goes back adds no tokens', () => {
    const b = new TokenBucket(10, 1, 1000);
    b.reserve(1000, 0);
    assert.equal(b.reserve(500, 0), undefined);
    assert.equal(b.reserve(1100, 0), 1100);
  });

  it('refuses a negative rate or a capacity below one request', () => {
    assert.throws(() => new TokenBucket(-1, 1, 0), RangeError);
    assert.throws(() => new TokenBucket(1, 0.5, 0), RangeError);
  });
});
