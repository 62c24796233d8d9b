import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseTimestamp } from './timestamps.js';

const t = (iso: string) => Date.parse(iso);

describe('parseTimestamp', () => {
  const valid: Array<[unknown, number]> = [
    ['2026-11-22T10:00:00.123Z', t('2026-11-22T10:00:00.123Z')],
    ['2026-11-22T10:00:00Z', t('2026-11-22T10:00:00.000Z')],
    ['2016-04-26T18:14:48+0000', t('2016-04-26T18:14:48.000Z')],
    ['2016-04-26T20:14:48+0200', t('2016-04-26T18:14:48.000Z')],
    ['2016-04-26T13:14:48-05:00', t('2016-04-26T18:14:48.000Z')],
    ['2016-04-26T18:14:48-0530', t('2016-04-26T23:44:48.000Z')],
    ['2026-11-22T10:00:00.123456789Z', t('2026-11-22T10:00:00.123Z')],
    ['2026-11-22T10:00:00.1Z', t('2026-11-22T10:00:00.100Z')],
    ['2026-11-22 10:00:00Z', t('2026-11-22T10:00:00.000Z')],
    ['2026-11-22T10:00', t('2026-11-22T10:00:00.000Z')],
    ['2026-11-22', t('2026-11-22T00:00:00.000Z')],
    ['1999-12-31T23:59:59.999+00', t('1999-12-31T23:59:59.999Z')],
    [1_700_000_000_123, 1_700_000_000_123],
    ['1000-01-01T00:00:00Z', t('1000-01-01T00:00:00.000Z')],
  ];
  for (const [input, expected] of valid) it(`${JSON.stringify(input)} → ${new Date(expected).toISOString()}`, () => assert.equal(parseTimestamp(input), expected));

  const invalid: unknown[] = ['', 'yesterday', '2026-13-01', '2026-02-31T00:00:00Z', '2026-11-22T25:00:00Z', '10000-01-01', '0999-01-01', '0000-01-01T00:00:00Z', '0050-06-15', '0099-12-31T23:59:59Z', '1000-01-01T00:30:00+01:00', '2026-11-22T10:00:00+1900', null, true, {}, Number.NaN, 1e20, -1e15];
  for (const input of invalid) it(`${JSON.stringify(input)} → undefined`, () => assert.equal(parseTimestamp(input), undefined));
});
