import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { UsageCount } from '@switchyard/platform/schemas/generated';
import { UsageTotals } from './usage-index.js';

const count = (over: Partial<UsageCount>): UsageCount => ({ sourceId: 's', day: '2025-01-01', writer: 'ingest-1', accepted: 0, rejected: 0, filtered: 0, filteredByFilter: 0, updatedAt: 1, ...over });

describe('UsageTotals: calls per source and day from writers\' running totals', () => {
  it('keeps the latest total of each writer and sums writers; newest day first', () => {
    const u = new UsageTotals();
    u.add(count({ accepted: 5, updatedAt: 1 }));
    u.add(count({ accepted: 9, rejected: 1, updatedAt: 2 })); // same writer, later total
    u.add(count({ accepted: 7, updatedAt: 1 })); // an older total read late does not win
    u.add(count({ writer: 'ingest-2', accepted: 3 }));
    u.add(count({ writer: 'fanout-1', filtered: 2 }));
    u.add(count({ writer: 'fanout-2', filtered: 3, filteredByFilter: 2 }));
    u.add(count({ day: '2025-01-02', accepted: 1 }));
    u.add(count({ sourceId: 'other', accepted: 100 }));
    assert.deepEqual(u.days('s'), [
      { day: '2025-01-02', accepted: 1, rejected: 0, filtered: 0, filteredBy: { integrations: 0, filter: 0 } },
      { day: '2025-01-01', accepted: 12, rejected: 1, filtered: 5, filteredBy: { integrations: 3, filter: 2 } },
    ]);
    assert.deepEqual(u.days('s', '2025-01-02').length, 1);
    assert.deepEqual(u.days('nobody'), []);
  });
});
