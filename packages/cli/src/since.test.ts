import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseSince } from './since.js';
import { FlagError } from './webhook-options.js';

const now = new Date('2025-01-10T12:00:00.000Z');

describe('parseSince', () => {
  it('counts a duration back from now', () => {
    assert.equal(parseSince('45s', now), '2025-01-10T11:59:15.000Z');
    assert.equal(parseSince('30m', now), '2025-01-10T11:30:00.000Z');
    assert.equal(parseSince('1h', now), '2025-01-10T11:00:00.000Z');
    assert.equal(parseSince('2d', now), '2025-01-08T12:00:00.000Z');
    assert.equal(parseSince('1w', now), '2025-01-03T12:00:00.000Z');
    assert.equal(parseSince('0m', now), now.toISOString());
  });

  it('normalizes an ISO time to UTC with milliseconds', () => {
    assert.equal(parseSince('2025-01-02T03:04:05Z', now), '2025-01-02T03:04:05.000Z');
    assert.equal(parseSince('2025-01-02T03:04:05.123+02:00', now), '2025-01-02T01:04:05.123Z');
  });

  it('reads a time without an offset, or a date alone, as local time', () => {
    assert.equal(parseSince('2025-01-02T03:04', now), new Date(2025, 0, 2, 3, 4).toISOString());
    assert.equal(parseSince('2025-01-02', now), new Date(2025, 0, 2).toISOString());
  });

  it('refuses anything else', () => {
    for (const bad of ['', '1', 'h', '-1h', '1.5h', '2h30m', '1y', 'yesterday', 'May 5', '2025-13-01', '2025-01-02T25:00Z', '99999999999w']) {
      assert.throws(() => parseSince(bad, now), FlagError, bad);
    }
  });
});
