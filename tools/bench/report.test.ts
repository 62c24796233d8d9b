import assert from 'node:assert/strict';
import { test } from 'node:test';
import { formatTable, type Row } from './report.js';

test('formatTable: one padded column each of scenario, result, baseline, ratio, target, met, all arrived, notes', () => {
  const rows: Row[] = [
    { scenario: 'ingest only', value: 1234.4, unit: 'events/s', baseline: { name: '(c)', value: 1500 }, ratio: 0.823, target: '≥ 0.8', met: true, verified: true, details: { p50ms: 3.456, note: 'x', _hidden: 1 }, rssMb: { ingest: 80.4 } },
    { scenario: 'retry storm', value: 2.5, unit: 's to drain', verified: false, details: {}, rssMb: {} },
  ];
  assert.equal(formatTable(rows), [
    '| scenario    | result         | baseline | ratio | target | met | all arrived | notes                           |',
    '|-------------|----------------|----------|-------|--------|-----|-------------|---------------------------------|',
    '| ingest only | 1234 events/s  | (c) 1500 | 0.82  | ≥ 0.8  | yes | yes         | p50ms 3.46, note x; ingest 80MB |',
    '| retry storm | 2.5 s to drain |          |       |        |     | NO          |                                 |',
  ].join('\n'));
});
