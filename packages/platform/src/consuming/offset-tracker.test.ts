import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { OffsetTracker, PartitionOffsets } from './offset-tracker.js';

type Step = ['track' | 'complete', string];
const run = (steps: Step[]): OffsetTracker => {
  const t = new OffsetTracker();
  for (const [op, offset] of steps) {
    if (op === 'track') t.track(offset);
    else t.complete(offset);
  }
  return t;
};
const track = (...offsets: string[]): Step[] => offsets.map((o) => ['track', o]);
const complete = (...offsets: string[]): Step[] => offsets.map((o) => ['complete', o]);

describe('OffsetTracker: the offset to commit', () => {
  const cases: Array<[string, Step[], { committable: string | undefined; inFlight: number; oldestPending: string | undefined }]> = [
    ['nothing tracked', [], { committable: undefined, inFlight: 0, oldestPending: undefined }],
    ['nothing complete', track('0', '1', '2'), { committable: undefined, inFlight: 3, oldestPending: '0' }],
    ['in order', [...track('0', '1', '2'), ...complete('0', '1', '2')], { committable: '3', inFlight: 0, oldestPending: undefined }],
    ['in order, partly', [...track('0', '1', '2'), ...complete('0', '1')], { committable: '2', inFlight: 1, oldestPending: '2' }],
    ['out of order: the oldest holds the commit back', [...track('0', '1', '2'), ...complete('2', '1')], { committable: undefined, inFlight: 1, oldestPending: '0' }],
    ['out of order, then the oldest finishes', [...track('0', '1', '2'), ...complete('2', '1', '0')], { committable: '3', inFlight: 0, oldestPending: undefined }],
    ['a hole in the middle', [...track('10', '11', '12', '13'), ...complete('10', '12', '13')], { committable: '11', inFlight: 1, oldestPending: '11' }],
    ['gaps in the offsets (compaction, markers)', [...track('5', '7', '20'), ...complete('5', '7')], { committable: '8', inFlight: 1, oldestPending: '20' }],
    ['gaps, all complete', [...track('5', '7', '20'), ...complete('20', '5', '7')], { committable: '21', inFlight: 0, oldestPending: undefined }],
    ['finishing twice is harmless', [...track('0', '1'), ...complete('0', '0')], { committable: '1', inFlight: 1, oldestPending: '1' }],
    ['finishing an untracked offset is ignored', [...track('3'), ...complete('2', '4')], { committable: undefined, inFlight: 1, oldestPending: '3' }],
    ['committed offset stays while new records arrive', [...track('0'), ...complete('0'), ...track('1', '2'), ...complete('2')], { committable: '1', inFlight: 1, oldestPending: '1' }],
    ['beyond 2^53', [...track('9007199254740993', '9007199254740995'), ...complete('9007199254740993')], { committable: '9007199254740994', inFlight: 1, oldestPending: '9007199254740995' }],
  ];
  for (const [name, steps, expected] of cases) {
    it(name, () => {
      const t = run(steps);
      assert.deepEqual({ committable: t.committable(), inFlight: t.inFlight(), oldestPending: t.oldestPending() }, expected);
    });
  }

  it('complete() says whether the offset was pending', () => {
    const t = run(track('0'));
    assert.equal(t.complete('0'), true);
    assert.equal(t.complete('0'), false);
    assert.equal(t.complete('9'), false);
  });

  it('refuses offsets that do not increase, until reset', () => {
    const t = run(track('5'));
    assert.throws(() => t.track('5'), RangeError);
    assert.throws(() => t.track('4'), RangeError);
    t.reset();
    assert.deepEqual([t.committable(), t.inFlight(), t.oldestPending()], [undefined, 0, undefined]);
    t.track('4');
    t.complete('4');
    assert.equal(t.committable(), '5');
  });

  it('100k records finished in random order: committable = last + 1, and never goes back', () => {
    const n = 100_000;
    const t = new OffsetTracker();
    const offsets: string[] = [];
    // Gaps of 1 or 2, as compaction leaves them.
    for (let i = 0, o = 1000; i < n; i++, o += 1 + (i % 3 === 0 ? 1 : 0)) {
      offsets.push(String(o));
      t.track(String(o));
    }
    // Deterministic shuffle (a linear congruential generator) so a failure reproduces.
    let seed = 42;
    const order = offsets.slice();
    for (let i = order.length - 1; i > 0; i--) {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      const j = seed % (i + 1);
      [order[i], order[j]] = [order[j]!, order[i]!];
    }
    const done = new Set<string>();
    let previous = -1n;
    const started = performance.now();
    for (const [i, o] of order.entries()) {
      t.complete(o);
      done.add(o);
      const c = t.committable();
      if (c !== undefined) {
        assert.ok(BigInt(c) >= previous, 'the committable offset never goes back');
        previous = BigInt(c);
      }
      // Spot-check the invariant: every tracked offset below the committable one is done.
      if (i % 9_973 === 0 && c !== undefined) {
        for (const x of offsets) {
          if (BigInt(x) >= BigInt(c)) break;
          assert.ok(done.has(x));
        }
      }
    }
    assert.equal(t.committable(), String(BigInt(offsets.at(-1)!) + 1n));
    assert.equal(t.inFlight(), 0);
    assert.equal(t.oldestPending(), undefined);
    assert.ok(performance.now() - started < 5_000, 'linear, not quadratic');
  });
});

describe('PartitionOffsets: what to commit across partitions', () => {
  it('keeps one tracker per topic-partition', () => {
    const p = new PartitionOffsets();
    assert.equal(p.tracker('delivery', 0), p.tracker('delivery', 0));
    assert.notEqual(p.tracker('delivery', 0), p.tracker('delivery', 1));
    assert.notEqual(p.tracker('delivery', 0), p.tracker('retry-1', 0));
  });

  it('reports only partitions whose offset advanced since the last markCommitted', () => {
    const p = new PartitionOffsets();
    const a = p.tracker('delivery', 0);
    const b = p.tracker('delivery', 1);
    p.tracker('delivery', 2).track('0'); // never completes
    for (const o of ['0', '1', '2']) { a.track(o); b.track(o); }
    assert.deepEqual(p.committableOffsets(), []);

    a.complete('0');
    b.complete('0');
    const first = p.committableOffsets();
    assert.deepEqual(first, [{ topic: 'delivery', partition: 0, offset: '1' }, { topic: 'delivery', partition: 1, offset: '1' }]);
    // Until the commit is recorded, the same offsets are reported again.
    assert.deepEqual(p.committableOffsets(), first);
    p.markCommitted(first);
    assert.deepEqual(p.committableOffsets(), []);

    b.complete('2'); // out of order: b cannot move yet
    assert.deepEqual(p.committableOffsets(), []);
    b.complete('1');
    assert.deepEqual(p.committableOffsets(), [{ topic: 'delivery', partition: 1, offset: '3' }]);
  });

  it('does not report an offset below the last commit (after a reset)', () => {
    const p = new PartitionOffsets();
    const t = p.tracker('delivery', 0);
    t.track('10');
    t.complete('10');
    p.markCommitted(p.committableOffsets());
    t.reset();
    t.track('5');
    t.complete('5');
    assert.deepEqual(p.committableOffsets(), []);
  });

  it('forgets a dropped partition; its late completions and commits are ignored', () => {
    const p = new PartitionOffsets();
    const old = p.tracker('delivery', 0);
    old.track('0');
    p.drop('delivery', 0);
    old.complete('0');
    assert.deepEqual(p.committableOffsets(), []);
    p.markCommitted([{ topic: 'delivery', partition: 0, offset: '1' }]);
    // Reassigned later: a fresh tracker with no memory of the old commit.
    const fresh = p.tracker('delivery', 0);
    assert.notEqual(fresh, old);
    fresh.track('0');
    fresh.complete('0');
    assert.deepEqual(p.committableOffsets(), [{ topic: 'delivery', partition: 0, offset: '1' }]);
  });
});

describe('PartitionOffsets.resumePoint: where a partition is read again from after this instance was expelled', () => {
  it('the oldest unfinished record, else just past the last finished one, else nothing', () => {
    const p = new PartitionOffsets();
    assert.equal(p.resumePoint('delivery', 0), undefined);
    const t = p.tracker('delivery', 0);
    for (const o of ['10', '11', '12']) t.track(o);
    t.complete('10');
    t.complete('12');
    assert.equal(p.resumePoint('delivery', 0), '11', 'in flight: read again (a duplicate, never a gap)');
    t.complete('11');
    assert.equal(p.resumePoint('delivery', 0), '13', 'all finished: nothing to read again');
    assert.equal(p.resumePoint('delivery.retry.1', 0), undefined);
  });
});

describe('PartitionOffsets across a rebalance the member stayed in', () => {
  it('keeps the partitions still assigned (their in-flight records still count) and goes on just past the last record read', () => {
    const p = new PartitionOffsets();
    const kept = p.tracker('delivery', 0);
    for (const o of ['10', '11', '12']) kept.track(o);
    kept.complete('10');
    p.tracker('delivery', 1).track('5');
    p.retainOnly(new Set(['delivery:0']));
    assert.equal(p.readPosition('delivery', 0), '13', 'records 11 and 12 are in flight: not read again');
    assert.equal(p.readPosition('delivery', 1), undefined, 'partition 1 went to another member');
    kept.complete('12');
    kept.complete('11');
    assert.deepEqual(p.committableOffsets(), [{ topic: 'delivery', partition: 0, offset: '13' }]);
    assert.equal(new PartitionOffsets().readPosition('delivery', 0), undefined);
  });
});
