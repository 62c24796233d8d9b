import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Registry } from '@switchyard/platform/metrics';
import type { UsageCount } from '@switchyard/platform/schemas/generated';
import { registerIndexMetrics } from './index-metrics.js';
import { UsageTotals } from './usage-index.js';

const count = (over: Partial<UsageCount>): UsageCount => ({ sourceId: 's', day: '2025-01-01', writer: 'ingest-1', accepted: 0, rejected: 0, filtered: 0, filteredByFilter: 0, updatedAt: 1, ...over });

describe('index gauges of the control service', () => {
  it('report the sizes and maxima as they are when scraped', async () => {
    const registry = new Registry();
    const usage = new UsageTotals();
    const traces = { size: 0, max: 100 };
    registerIndexMetrics(registry, () => ({ traces, deadLetters: { size: 3, max: 10 }, usage }));
    const value = async (name: string) => (await registry.getSingleMetric(name)!.get()).values[0]?.value;
    assert.equal(await value('control_trace_index_messages'), 0);
    traces.size = 42;
    usage.add(count({}));
    usage.add(count({ writer: 'fanout-1' }));
    usage.add(count({ sourceId: 't' }));
    usage.add(count({ accepted: 2, updatedAt: 2 })); // replaces ingest-1's total for s
    assert.equal(await value('control_trace_index_messages'), 42);
    assert.equal(await value('control_trace_index_max_messages'), 100);
    assert.equal(await value('control_dead_letter_index_letters'), 3);
    assert.equal(await value('control_dead_letter_index_max_letters'), 10);
    assert.equal(await value('control_usage_index_totals'), 3);
  });
});
