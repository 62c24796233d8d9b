import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DEFAULT_LABEL_BOUND, OTHER, RANK_EVERY_MS, RETIRE_AFTER_MS, type LabelBound } from '@switchyard/platform/bounded-labels';
import { createMetricsRegistry } from '@switchyard/platform/metrics';
import { deliveryMetrics } from './delivery-metrics.js';

const DESTINATIONS = 20_000;
const MB = 1 << 20;
const PER_DESTINATION = ['delivery_attempts_total', 'delivery_request_seconds_bucket', 'delivery_tasks_delivered_total', 'delivery_breaker_open', 'delivery_rate_limited_total'];

/** Per metric name: the destination label's values, and the sum of the samples. */
function read(text: string): Map<string, { destinations: Set<string>; sum: number }> {
  const out = new Map<string, { destinations: Set<string>; sum: number }>();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const name = line.slice(0, line.search(/[{ ]/));
    let of = out.get(name);
    if (!of) out.set(name, (of = { destinations: new Set(), sum: 0 }));
    const d = /destination="([^"]*)"/.exec(line)?.[1];
    if (d !== undefined) of.destinations.add(d);
    if (!line.includes('le="')) of.sum += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return out;
}

/**
 * What a delivery instance counts for 20 000 destinations, as task-runner.ts does: per attempt a
 * status class, a latency and the breaker gauge; 5 % failing (breaker open), 1 % rate-limited.
 */
function deliverToAll(bound: LabelBound, round: number, clock: () => number) {
  const registry = createMetricsRegistry('delivery');
  const metrics = deliveryMetrics(registry, { retryTiers: 4 }, { bound, clock });
  let attempts = 0;
  for (let r = 0; r < round; r++) {
    for (let i = 0; i < DESTINATIONS; i++) {
      const destination = `dst_${String(i).padStart(26, '0')}`;
      const failing = i % 20 === 19;
      for (let k = 0; k < 1 + (i % 5); k++) {
        metrics.requestSeconds.observe({ destination }, 0.01 * (1 + (i % 9)));
        metrics.attempts.inc({ destination, status_class: failing ? (k % 2 ? 'timeout' : '5xx') : '2xx' });
        attempts++;
      }
      if (!failing) metrics.delivered.inc({ destination });
      metrics.breakerOpen.set({ destination }, failing ? 1 : 0);
      if (i % 100 === 0) metrics.rateLimited.inc({ destination, action: 'held' }, 3);
    }
  }
  return { registry, attempts };
}

test(`20 000 destinations: delivery's /metrics stays under 1 MB, every per-destination metric has at most N + 1 destination values, and the sums over destinations are exact`, async () => {
  assert.equal(DEFAULT_LABEL_BOUND.mode, 'top');
  const n = DEFAULT_LABEL_BOUND.mode === 'top' ? DEFAULT_LABEL_BOUND.n : 0;
  const { registry, attempts } = deliverToAll(DEFAULT_LABEL_BOUND, 1, Date.now);
  const text = await registry.metrics();
  assert.ok(Buffer.byteLength(text) < MB, `${Buffer.byteLength(text)} bytes`);
  const m = read(text);
  for (const name of PER_DESTINATION) {
    const values = m.get(name)?.destinations;
    assert.ok(values && values.size <= n + 1 && values.has(OTHER), `${name}: ${values?.size} destination values`);
  }
  assert.equal(m.get('delivery_attempts_total')!.sum, attempts);
  assert.equal(m.get('delivery_request_seconds_count')!.sum, attempts);
  assert.equal(m.get('delivery_tasks_delivered_total')!.sum, DESTINATIONS * 19 / 20);
  assert.equal(m.get('delivery_breaker_open')!.sum, DESTINATIONS / 20);
  assert.equal(m.get('delivery_rate_limited_total')!.sum, (DESTINATIONS / 100) * 3);
});

test('20 000 destinations ranked again and again: the metrics stay as small, and none puts everything in _other', async () => {
  let now = 0;
  const clock = () => now;
  const registry = createMetricsRegistry('delivery');
  const metrics = deliveryMetrics(registry, { retryTiers: 4 }, { bound: { mode: 'top', n: 100 }, clock });
  let first = 0;
  for (let minute = 0; minute < 6; minute++) {
    // Another 2 000 destinations are the busy ones each minute: the top 100 changes every time.
    for (let i = 0; i < 2000; i++) {
      const destination = `dst_${String((minute * 2000 + i) % DESTINATIONS).padStart(26, '0')}`;
      for (let k = 0; k < 1 + (i % 10); k++) metrics.attempts.inc({ destination, status_class: '2xx' });
      metrics.requestSeconds.observe({ destination }, 0.02);
    }
    now += Math.max(RANK_EVERY_MS, RETIRE_AFTER_MS / 2);
    const text = await registry.metrics();
    const size = Buffer.byteLength(text);
    if (minute === 0) first = size;
    const values = read(text).get('delivery_request_seconds_bucket')!.destinations;
    assert.ok(values.size <= 101, `minute ${minute}: ${values.size}`);
    assert.ok(size < first * 1.5, `minute ${minute}: ${size} bytes, ${first} at first: retired series were removed`);
  }
  const none = read(await deliverToAll({ mode: 'none' }, 1, clock).registry.metrics());
  for (const name of PER_DESTINATION) assert.deepEqual([...none.get(name)!.destinations], [OTHER], name);
});
