import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Registry } from 'prom-client';
import { BoundedLabel, OTHER, parseLabelBound, RANK_EVERY_MS, RETIRE_AFTER_MS, type LabelBound } from './bounded-labels.js';

type Values = Array<{ labels: Record<string, string | number | undefined>; value: number; metricName?: string }>;

function setup(bound: LabelBound, exists?: (id: string) => boolean) {
  let now = 0;
  const registry = new Registry();
  const label = new BoundedLabel({ label: 'destination', bound, clock: () => now, ...(exists ? { exists } : {}) });
  const counter = label.counter({ name: 'x_total', help: 'x', labelNames: ['destination', 'class'], registers: [registry] });
  const histogram = label.histogram({ name: 'x_seconds', help: 'x', labelNames: ['destination'], buckets: [0.1, 1], registers: [registry] });
  const gauge = label.gauge({ name: 'x_open', help: 'x', labelNames: ['destination'], registers: [registry] });
  const byId = async (metric: { get(): Promise<{ values: Values }> }, suffix = '') => {
    const out = new Map<string, number>();
    for (const v of (await metric.get()).values) {
      if (suffix && v.metricName !== `x_seconds${suffix}`) continue;
      const id = String(v.labels.destination);
      out.set(id, (out.get(id) ?? 0) + v.value);
    }
    return out;
  };
  const sum = (m: Map<string, number>) => [...m.values()].reduce((a, b) => a + b, 0);
  // A scrape: what Prometheus does every 15 s (collect hooks rank when a ranking is due).
  const scrape = () => registry.metrics();
  return { label, counter, histogram, gauge, byId, sum, scrape, advance: (ms: number) => { now += ms; } };
}

test('parseLabelBound: none, all and top:N from 1 to 10 000; anything else is refused', () => {
  const cases: Array<[string, LabelBound | undefined]> = [
    ['none', { mode: 'none' }], ['all', { mode: 'all' }], ['top:1', { mode: 'top', n: 1 }], ['top:100', { mode: 'top', n: 100 }], [' top:10000 ', { mode: 'top', n: 10_000 }],
    ['top:0', undefined], ['top:10001', undefined], ['top:', undefined], ['top:-1', undefined], ['100', undefined], ['ALL', undefined], ['dst-a,dst-b', undefined],
  ];
  for (const [text, want] of cases) assert.deepEqual(parseLabelBound(text), want, text);
});

test('top:N shows the first N ids seen and folds the rest into _other, so sums over the label still count everything', async () => {
  const m = setup({ mode: 'top', n: 3 });
  for (let i = 0; i < 10; i++) {
    m.counter.inc({ destination: `d${i}`, class: '2xx' }, i + 1);
    m.histogram.observe({ destination: `d${i}` }, 0.5);
  }
  const counts = await m.byId(m.counter);
  assert.deepEqual([...counts.keys()].sort(), [OTHER, 'd0', 'd1', 'd2']);
  assert.equal(counts.get(OTHER), 4 + 5 + 6 + 7 + 8 + 9 + 10);
  assert.equal(m.sum(counts), 55);
  const observed = await m.byId(m.histogram, '_count');
  assert.equal(observed.get(OTHER), 7);
  assert.equal(m.sum(observed), 10);
});

test('none puts every id in _other; all shows every id', async () => {
  const none = setup({ mode: 'none' });
  const all = setup({ mode: 'all' });
  for (let i = 0; i < 50; i++) for (const m of [none, all]) m.counter.inc({ destination: `d${i}`, class: '2xx' });
  assert.deepEqual([...(await none.byId(none.counter))], [[OTHER, 50]]);
  const shown = await all.byId(all.counter);
  assert.equal(shown.size, 50);
  assert.ok(!shown.has(OTHER));
});

test('an id outside the top N replaces the least active one only when twice as active; the replaced one is frozen, then its series removed, and the slots stay N', async () => {
  const m = setup({ mode: 'top', n: 2 });
  m.counter.inc({ destination: 'a', class: '2xx' }, 10);
  m.counter.inc({ destination: 'b', class: '2xx' }, 1);
  m.counter.inc({ destination: 'b', class: '5xx' }, 1);
  m.counter.inc({ destination: 'c', class: '2xx' }, 3); // 3 ≤ 2 × 2: b stays
  m.advance(RANK_EVERY_MS);
  await m.scrape();
  assert.ok(m.label.shows('b'));
  m.counter.inc({ destination: 'c', class: '2xx' }, 20); // now c is far more active than b
  m.advance(RANK_EVERY_MS);
  await m.scrape();
  // b is frozen: its series stay as they were (for the next scrapes to read), what it counts goes to _other.
  assert.equal(m.label.shows('b'), false);
  m.counter.inc({ destination: 'b', class: '2xx' }, 5);
  let counts = await m.byId(m.counter);
  assert.equal(counts.get('b'), 2);
  assert.equal(counts.get(OTHER), 3 + 20 + 5);
  assert.equal(m.label.slotCount, 2, 'c waits for b\'s slot');
  m.advance(RETIRE_AFTER_MS);
  await m.scrape();
  m.advance(RANK_EVERY_MS);
  await m.scrape();
  counts = await m.byId(m.counter);
  assert.ok(!counts.has('b'), 'b\'s series are removed (both of its classes)');
  assert.ok(m.label.shows('c'));
  assert.equal(m.label.slotCount, 2);
  m.counter.inc({ destination: 'c', class: '2xx' });
  counts = await m.byId(m.counter);
  assert.equal(counts.get('c'), 1, 'c counts under its id from now on');
});

test('a deleted id is retired even when slots are free (all too): frozen first, its series removed after RETIRE_AFTER_MS', async () => {
  for (const bound of [{ mode: 'top', n: 100 }, { mode: 'all' }] as const) {
    const configured = new Set(['a', 'b']);
    const m = setup(bound, (id) => configured.has(id));
    m.counter.inc({ destination: 'a', class: '2xx' });
    m.counter.inc({ destination: 'b', class: '2xx' });
    m.histogram.observe({ destination: 'b' }, 0.2);
    m.counter.inc({ destination: 'gone', class: '2xx' }); // never configured: never shown
    configured.delete('b');
    m.advance(RANK_EVERY_MS);
    await m.scrape();
    assert.equal((await m.byId(m.counter)).get('b'), 1, 'frozen, still shown as it was');
    m.advance(RETIRE_AFTER_MS);
    await m.scrape();
    assert.deepEqual([...(await m.byId(m.counter)).keys()].sort(), [OTHER, 'a'], bound.mode);
    assert.deepEqual([...(await m.byId(m.histogram)).keys()], [], bound.mode);
  }
});

test('a gauge shows the shown ids\' values and sums the others\' in _other; a deleted id\'s value goes', async () => {
  const configured = new Set(['a', 'b', 'c', 'd']);
  const m = setup({ mode: 'top', n: 2 }, (id) => configured.has(id));
  for (const id of ['a', 'b', 'c', 'd']) m.counter.inc({ destination: id, class: '2xx' });
  m.gauge.set({ destination: 'a' }, 1);
  m.gauge.set({ destination: 'b' }, 0);
  m.gauge.set({ destination: 'c' }, 1);
  m.gauge.set({ destination: 'd' }, 1);
  assert.deepEqual(Object.fromEntries(await m.byId(m.gauge)), { a: 1, b: 0, [OTHER]: 2 });
  m.gauge.set({ destination: 'c' }, 0);
  configured.delete('d');
  assert.deepEqual(Object.fromEntries(await m.byId(m.gauge)), { a: 1, b: 0, [OTHER]: 0 });
});

test('with 20 000 ids whose activity shifts over an hour, the label keeps at most N + 1 values: the series of retired ids are removed, not left behind', async () => {
  const n = 50;
  const m = setup({ mode: 'top', n });
  for (let minute = 0; minute < 60; minute++) {
    // Each minute another 1 000 ids are the busy ones (all 20 000 three times over the hour), and a few others trickle.
    const first = (minute * 1000) % 20_000;
    for (let i = first; i < first + 1000; i++) m.counter.inc({ destination: `d${i}`, class: '2xx' }, 1 + (i % 7));
    for (let i = minute % 100; i < 20_000; i += 100) m.counter.inc({ destination: `d${i}`, class: '5xx' });
    m.advance(RANK_EVERY_MS);
    await m.scrape();
    const counts = await m.byId(m.counter);
    assert.ok(counts.size <= n + 1, `minute ${minute}: ${counts.size} values`);
    assert.ok(m.label.slotCount <= n);
  }
});
