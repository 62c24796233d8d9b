import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { AvroCodec } from '@switchyard/platform/codec/avro-codec';
import { DEFAULT_LABEL_BOUND, OTHER } from '@switchyard/platform/bounded-labels';
import { createLogger } from '@switchyard/platform/logger';
import { createMetricsRegistry } from '@switchyard/platform/metrics';
import { UsageRecorder } from '@switchyard/platform/usage/usage-recorder';
import { fanoutMetrics } from './fanout-metrics.js';

test('20 000 destinations of 10 000 sources: fan-out\'s /metrics stays under 1 MB, destination and source labels have at most N + 1 values, and the sums are exact', async () => {
  const n = DEFAULT_LABEL_BOUND.mode === 'top' ? DEFAULT_LABEL_BOUND.n : 0;
  const registry = createMetricsRegistry('fanout');
  const metrics = fanoutMetrics(registry);
  const usage = new UsageRecorder({
    service: 'fanout', producer: { send: async () => [] }, codec: {} as AvroCodec, topic: 'usage', registry,
    logger: createLogger({ service: 'fanout', level: 'silent' }), intervalMs: 60_000,
  });
  for (let i = 0; i < 20_000; i++) {
    metrics.tasks.inc({ destination: `dst_${i}` }, 1 + (i % 3));
    if (i % 20 === 0) metrics.held.inc({ destination: `dst_${i}` }, 2);
    if (i % 2 === 0) {
      usage.count(`src_${i / 2}`, 0, 'filtered', 1, 'integrations');
      usage.count(`src_${i / 2}`, 0, 'rejected', 2);
    }
  }
  const text = await registry.metrics();
  assert.ok(Buffer.byteLength(text) < 1 << 20, `${Buffer.byteLength(text)} bytes`);
  const values = (name: string, label: string) => {
    const seen = new Set<string>();
    let sum = 0;
    for (const line of text.split('\n')) {
      if (!line.startsWith(`${name}{`)) continue;
      seen.add(new RegExp(`${label}="([^"]*)"`).exec(line)![1]!);
      sum += Number(line.slice(line.lastIndexOf(' ') + 1));
    }
    return { seen, sum };
  };
  const tasks = values('fanout_tasks_produced_total', 'destination');
  const held = values('fanout_tasks_held_total', 'destination');
  const calls = values('switchyard_usage_calls_total', 'source');
  for (const v of [tasks, held, calls]) assert.ok(v.seen.size <= n + 1 && v.seen.has(OTHER), String(v.seen.size));
  assert.equal(tasks.sum, Array.from({ length: 20_000 }, (_, i) => 1 + (i % 3)).reduce((a, b) => a + b, 0));
  assert.equal(held.sum, 1000 * 2);
  assert.equal(calls.sum, 10_000 * 3);
});
