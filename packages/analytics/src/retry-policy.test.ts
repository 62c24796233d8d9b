import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isRetriable, parseRetryAfter, retryDelay, RETRY_DEFAULTS, type AttemptOutcome } from './retry-policy.js';

const policy = { ...RETRY_DEFAULTS, maxRetries: 10 };
const NOW = Date.parse('2025-01-01T00:00:00Z');
const status = (s: number, retryAfter?: string): AttemptOutcome => ({ kind: 'response', status: s, retryAfter });

describe('retry policy', () => {
  const cases: [string, AttemptOutcome, boolean][] = [
    ['500', status(500), true],
    ['502', status(502), true],
    ['503', status(503), true],
    ['429', status(429), true],
    ['network error', { kind: 'network' }, true],
    ['timeout', { kind: 'timeout' }, true],
    ['400', status(400), false],
    ['401', status(401), false],
    ['404', status(404), false],
    ['413', status(413), false],
  ];
  for (const [name, outcome, expected] of cases) {
    it(`${name} is ${expected ? '' : 'not '}retried`, () => {
      assert.equal(isRetriable(outcome), expected);
      assert.equal(retryDelay(outcome, 0, policy, NOW, () => 0.5) !== undefined, expected);
    });
  }

  it('backs off exponentially with full jitter up to the cap', () => {
    const top = () => 0.999999;
    const ceilings = Array.from({ length: 10 }, (_, n) => retryDelay({ kind: 'network' }, n, policy, NOW, top));
    assert.deepEqual(ceilings, [99, 199, 399, 799, 1599, 3199, 6399, 9999, 9999, 9999]);
    assert.equal(retryDelay({ kind: 'network' }, 5, policy, NOW, () => 0), 0);
  });

  it('gives up after maxRetries retries', () => {
    assert.notEqual(retryDelay(status(503), 9, policy, NOW), undefined);
    assert.equal(retryDelay(status(503), 10, policy, NOW), undefined);
    assert.equal(retryDelay(status(503), 0, { ...policy, maxRetries: 0 }, NOW), undefined);
  });

  it('honours Retry-After on 429 and 503, in seconds or as a date, capped', () => {
    assert.equal(retryDelay(status(429, '3'), 0, policy, NOW), 3000);
    assert.equal(retryDelay(status(503, new Date(NOW + 7000).toUTCString()), 0, policy, NOW), 7000);
    assert.equal(retryDelay(status(503, '86400'), 0, policy, NOW), RETRY_DEFAULTS.maxRetryAfterMs);
    // Only 429/503 carry it with that meaning; an unreadable value falls back to backoff.
    assert.equal(retryDelay(status(500, '3'), 0, policy, NOW, () => 0.5), 50);
    assert.equal(retryDelay(status(503, 'soon'), 0, policy, NOW, () => 0.5), 50);
  });

  it('parses Retry-After values', () => {
    assert.equal(parseRetryAfter('0', NOW), 0);
    assert.equal(parseRetryAfter(' 12 ', NOW), 12_000);
    assert.equal(parseRetryAfter(new Date(NOW - 5000).toUTCString(), NOW), 0);
    assert.equal(parseRetryAfter(null, NOW), undefined);
    assert.equal(parseRetryAfter('-1', NOW), undefined);
  });
});
