import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { formatDuration, parseStrictDuration } from './durations.js';

describe('parseStrictDuration', () => {
  const accepted: Array<[string, number]> = [['500ms', 500], ['0s', 0], ['30s', 30_000], ['5m', 300_000], ['4h', 14_400_000], ['24h', 86_400_000], ['90s', 90_000]];
  for (const [text, ms] of accepted) it(`reads ${text} as ${ms} ms`, () => assert.equal(parseStrictDuration(text), ms));

  const refused = ['', '5', 'm', '1.5s', '-1s', ' 5m', '5m ', '5 m', '1d', '5M', '5min', '1h30m', '0x10s', '1e3ms', '1234567890s'];
  for (const text of refused) it(`refuses ${JSON.stringify(text)}`, () => assert.equal(parseStrictDuration(text), undefined));
});

describe('formatDuration', () => {
  it('uses the largest unit that divides exactly', () => {
    assert.deepEqual([1_500, 1_000, 90_000, 300_000, 14_400_000, 0].map(formatDuration), ['1500ms', '1s', '90s', '5m', '4h', '0ms']);
  });
  it('reads back what it writes', () => {
    for (const ms of [1, 999, 1_000, 61_000, 3_600_000, 86_400_000]) assert.equal(parseStrictDuration(formatDuration(ms)), ms);
  });
});
