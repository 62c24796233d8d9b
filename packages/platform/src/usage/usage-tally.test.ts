import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { UsageTally, usageKey, utcDay } from './usage-tally.js';

const DAY = 86_400_000;
const T0 = Date.UTC(2025, 2, 10, 23, 59, 59);

describe('UsageTally: running totals per source and UTC day', () => {
  it('days are UTC', () => {
    assert.equal(utcDay(T0), '2025-03-10');
    assert.equal(utcDay(T0 + 1000), '2025-03-11');
  });

  it('hands out changed totals once (running totals, not deltas), again after more calls or a failed write', () => {
    const t = new UsageTally('ingest-x');
    t.add('s1', T0, 'accepted', 3);
    t.add('s1', T0, 'rejected');
    t.add('s1', T0 + 1000, 'accepted');
    t.add('s2', T0, 'filtered', 0); // nothing
    const first = t.takeChanged(T0 + 2000);
    assert.deepEqual(first.map((r) => [r.sourceId, r.day, r.accepted, r.rejected, r.filtered, r.writer]), [['s1', '2025-03-10', 3, 1, 0, 'ingest-x'], ['s1', '2025-03-11', 1, 0, 0, 'ingest-x']]);
    assert.deepEqual(t.takeChanged(T0 + 3000), []);
    t.add('s1', T0, 'accepted');
    const second = t.takeChanged(T0 + 4000);
    assert.deepEqual(second.map((r) => [r.day, r.accepted]), [['2025-03-10', 4]]);
    t.failed(second);
    assert.deepEqual(t.takeChanged(T0 + 5000).map((r) => [r.day, r.accepted]), [['2025-03-10', 4]]);
    assert.equal(usageKey(second[0]!), 's1|2025-03-10|ingest-x');
  });

  it('counts calls filtered by a destination filter apart, inside filtered', () => {
    const t = new UsageTally('fanout-x');
    t.add('s', T0, 'filtered', 2, 'integrations');
    t.add('s', T0, 'filtered', 3, 'filter');
    t.add('s', T0, 'filtered');
    const [r] = t.takeChanged(T0);
    assert.deepEqual([r!.filtered, r!.filteredByFilter], [6, 3]);
  });

  it('forgets written days older than the days it keeps', () => {
    const t = new UsageTally('w', 2);
    t.add('s', T0, 'accepted');
    t.takeChanged(T0);
    t.takeChanged(T0 + 2 * DAY);
    assert.equal(t.size, 0);
  });
});
