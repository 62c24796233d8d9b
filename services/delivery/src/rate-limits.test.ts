import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { instanceRate, RateLimits, rateShare, WAIT_IN_MEMORY_MS } from './rate-limits.js';

const counts = new Map([['sy.delivery', 6], ['sy.delivery.retry.1', 6], ['sy.delivery.retry.2', 6]]);
const keys = (topic: string, ...partitions: number[]) => partitions.map((p) => `${topic}:${p}`);

describe('rateShare', () => {
  it('is the partitions held over all delivery partitions, every tier counting like the delivery topic', () => {
    const held = [...keys('sy.delivery', 0, 1), ...keys('sy.delivery.retry.1', 0, 1), ...keys('sy.delivery.retry.2', 0, 1)];
    assert.equal(rateShare(held, counts), 6 / 18);
  });

  it('the shares of every member of a group add up to exactly 1 (no coordination needed)', () => {
    const members: string[][] = [[], [], []];
    let i = 0;
    for (const [topic, n] of counts) for (let p = 0; p < n; p++) members[i++ % 3]!.push(`${topic}:${p}`);
    const total = members.reduce((sum, m) => sum + rateShare(m, counts), 0);
    assert.ok(Math.abs(total - 1) < 1e-9);
  });

  it('split reads (DELIVERY_READS): the main group and the retries group together add up to 1', () => {
    const main = rateShare(keys('sy.delivery', 0, 1, 2, 3, 4, 5), counts);
    const retries = rateShare([...keys('sy.delivery.retry.1', 0, 1, 2, 3, 4, 5), ...keys('sy.delivery.retry.2', 0, 1, 2, 3, 4, 5)], counts);
    assert.equal(main, 1 / 3);
    assert.equal(main + retries, 1);
  });

  it('counts nothing it does not know: other topics, partitions beyond the count, no counts at all', () => {
    assert.equal(rateShare(['other:0', 'sy.delivery:9'], counts), 0);
    assert.equal(rateShare(keys('sy.delivery', 0), new Map()), 0);
  });
});

describe('instanceRate', () => {
  it('is the limit times the share, with a burst of a tenth of a second and never below one request', () => {
    assert.deepEqual(instanceRate(300, 1 / 3), { rate: 100, capacity: 10 });
    assert.deepEqual(instanceRate(20, 0.5), { rate: 10, capacity: 1 });
  });
});

describe('RateLimits (the hold decision)', () => {
  function limits(share: number) {
    let now = 1_000;
    const rates = new RateLimits({ clock: () => now });
    rates.setShare(share);
    return { rates, advance: (ms: number) => { now += ms; }, now: () => now };
  }

  it('wouldHold says whether the next task would be held, and reserves nothing (a due held range is held again unread)', () => {
    const { rates, advance } = limits(1); // 10/s, burst 1
    assert.equal(rates.wouldHold('d', 10, 0), false);
    assert.equal(rates.wouldHold('d', 10, 0), false, 'asking took no token');
    assert.deepEqual(rates.decide('d', 10, 0), { action: 'send' });
    assert.equal(rates.wouldHold('d', 10, 0), true, 'the burst is spent, and no wait is allowed');
    assert.equal(rates.wouldHold('d', 10, 100), false, 'the next token comes within 100 ms');
    for (let i = 0; i < 10; i++) rates.decide('d', 10, 1000);
    assert.equal(rates.wouldHold('d', 10, 1000), true, 'a second of tokens reserved ahead');
    advance(1000);
    assert.equal(rates.wouldHold('d', 10, 100), false);
    assert.equal(rates.waiting, 10);
  });

  it('a range takes its tokens at once, up to the wait allowed: ranges falling due together divide them', () => {
    const { rates, now } = limits(1); // 10/s, burst 1
    assert.deepEqual(rates.reserveUpTo('d', 10, 3, 1000).map((at) => at - now()), [0, 100, 200], 'only as many as the range has tasks');
    assert.deepEqual(rates.reserveUpTo('d', 10, 50, 1000).map((at) => at - now()), [300, 400, 500, 600, 700, 800, 900, 1000]);
    assert.deepEqual(rates.reserveUpTo('d', 10, 50, 1000), [], 'nothing left within the wait: the next range is held unread');
    assert.equal(rates.waiting, 0, 'a wait counts once it starts');
    rates.waitStarted();
    assert.equal(rates.waiting, 1);
  });

  it('sends while tokens last, then waits in memory up to the wait allowed, then holds', () => {
    const { rates, now } = limits(1); // 10/s, burst 1
    assert.deepEqual(rates.decide('d', 10, WAIT_IN_MEMORY_MS), { action: 'send' });
    const waits = Array.from({ length: 10 }, () => rates.decide('d', 10, WAIT_IN_MEMORY_MS));
    assert.deepEqual(waits.map((w) => w.action === 'wait' ? w.at - now() : -1), [100, 200, 300, 400, 500, 600, 700, 800, 900, 1000]);
    assert.equal(rates.waiting, 10);
    assert.deepEqual(rates.decide('d', 10, WAIT_IN_MEMORY_MS), { action: 'hold' });
    rates.waited();
    assert.equal(rates.waiting, 9);
  });

  it('a held task takes no token: the next one still gets the first free time', () => {
    const { rates, advance } = limits(1);
    rates.decide('d', 1, 0);
    assert.deepEqual(rates.decide('d', 1, 0), { action: 'hold' });
    advance(1000);
    assert.deepEqual(rates.decide('d', 1, 0), { action: 'send' });
  });

  it('destinations have buckets of their own: one held does not hold another', () => {
    const { rates } = limits(1);
    rates.decide('slow', 1, 0);
    assert.deepEqual(rates.decide('slow', 1, 0), { action: 'hold' });
    assert.deepEqual(rates.decide('other', 1, 0), { action: 'send' });
  });

  it('an instance holding no partition holds every task; a new share applies at once', () => {
    const { rates, advance } = limits(0);
    rates.decide('d', 100, 0); // the first burst token
    assert.deepEqual(rates.decide('d', 100, WAIT_IN_MEMORY_MS), { action: 'hold' });
    rates.setShare(0.5);
    advance(20);
    assert.deepEqual(rates.decide('d', 100, 0), { action: 'send' });
  });

  it('a changed limit applies from the change', () => {
    const { rates, advance } = limits(1);
    rates.decide('d', 1, 0);
    assert.deepEqual(rates.decide('d', 1, 0), { action: 'hold' });
    assert.deepEqual(rates.decide('d', 1000, 0), { action: 'hold' }, 'no token has come yet');
    advance(1);
    assert.deepEqual(rates.decide('d', 1000, 0), { action: 'send' });
  });
});
