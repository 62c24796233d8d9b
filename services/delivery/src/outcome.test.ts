import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { classifyAttempt, parseRetryAfter, type AttemptResult, type Outcome } from './outcome.js';

const response = (status: number, retryAfterMs?: number): AttemptResult =>
  retryAfterMs === undefined ? { kind: 'response', status, bodyExcerpt: '' } : { kind: 'response', status, bodyExcerpt: '', retryAfterMs };
const error = (e: Extract<AttemptResult, { kind: 'error' }>['error']): AttemptResult => ({ kind: 'error', error: e, message: e });

describe('classifyAttempt: what one attempt means for the task', () => {
  const cases: Array<[string, AttemptResult, Outcome]> = [
    ['200 is accepted', response(200), { verdict: 'accepted' }],
    ['201 is accepted', response(201), { verdict: 'accepted' }],
    ['204 is accepted', response(204), { verdict: 'accepted' }],
    ['299 is accepted', response(299), { verdict: 'accepted' }],
    ['301 is a redirect, not followed', response(301), { verdict: 'permanent', reason: 'redirect' }],
    ['302 is a redirect', response(302), { verdict: 'permanent', reason: 'redirect' }],
    ['304 is a redirect', response(304), { verdict: 'permanent', reason: 'redirect' }],
    ['307 is a redirect', response(307), { verdict: 'permanent', reason: 'redirect' }],
    ['308 is a redirect', response(308), { verdict: 'permanent', reason: 'redirect' }],
    ['400 is permanent', response(400), { verdict: 'permanent', reason: 'permanent_status' }],
    ['401 is permanent', response(401), { verdict: 'permanent', reason: 'permanent_status' }],
    ['404 is permanent', response(404), { verdict: 'permanent', reason: 'permanent_status' }],
    ['413 is permanent', response(413), { verdict: 'permanent', reason: 'permanent_status' }],
    ['499 is permanent', response(499), { verdict: 'permanent', reason: 'permanent_status' }],
    ['408 is retried', response(408), { verdict: 'retry', reason: 'status_408' }],
    ['429 is retried', response(429), { verdict: 'retry', reason: 'status_429' }],
    ['429 keeps its Retry-After', response(429, 30_000), { verdict: 'retry', reason: 'status_429', retryAfterMs: 30_000 }],
    ['500 is retried', response(500), { verdict: 'retry', reason: 'status_500' }],
    ['503 keeps its Retry-After', response(503, 5_000), { verdict: 'retry', reason: 'status_503', retryAfterMs: 5_000 }],
    ['599 is retried', response(599), { verdict: 'retry', reason: 'status_599' }],
    ['a final 1xx is retried', response(102), { verdict: 'retry', reason: 'status_102' }],
    ['a 6xx is retried', response(600), { verdict: 'retry', reason: 'status_600' }],
    ['status 0 is retried', response(0), { verdict: 'retry', reason: 'status_0' }],
    ['a timeout is retried', error('timeout'), { verdict: 'retry', reason: 'timeout' }],
    ['a connect error is retried', error('connect'), { verdict: 'retry', reason: 'connect' }],
    ['a reset is retried', error('reset'), { verdict: 'retry', reason: 'reset' }],
    ['an unknown error is retried', error('other'), { verdict: 'retry', reason: 'other' }],
    ['a DNS failure is retried', error('dns'), { verdict: 'retry', reason: 'dns' }],
    ['a certificate that does not verify is permanent', error('tls'), { verdict: 'permanent', reason: 'tls' }],
    ['a blocked address is permanent', error('blocked_address'), { verdict: 'permanent', reason: 'blocked_address' }],
    ['an invalid URL is permanent', error('invalid_url'), { verdict: 'permanent', reason: 'invalid_url' }],
  ];
  for (const [name, attempt, expected] of cases) {
    it(name, () => assert.deepEqual(classifyAttempt(attempt), expected));
  }
});

describe('parseRetryAfter: delta-seconds or HTTP-date → ms from now', () => {
  const now = Date.parse('2026-11-22T12:00:00.000Z');
  const cases: Array<[string, string | undefined, number | undefined]> = [
    ['absent', undefined, undefined],
    ['empty', '', undefined],
    ['delta-seconds', '120', 120_000],
    ['zero seconds', '0', 0],
    ['delta-seconds with spaces', ' 5 ', 5_000],
    ['negative seconds', '-5', undefined],
    ['fractional seconds', '1.5', undefined],
    ['seconds with a unit', '10s', undefined],
    ['IMF-fixdate in the future', 'Sun, 22 Nov 2026 12:01:30 GMT', 90_000],
    ['IMF-fixdate now', 'Sun, 22 Nov 2026 12:00:00 GMT', 0],
    ['IMF-fixdate in the past', 'Sun, 22 Nov 2026 11:59:00 GMT', undefined],
    ['IMF-fixdate in lower case', 'sun, 22 nov 2026 12:00:10 gmt', 10_000],
    ['RFC 850 date', 'Sunday, 22-Nov-26 12:00:10 GMT', 10_000],
    ['asctime date', 'Sun Nov 22 12:00:10 2026', 10_000],
    ['asctime date with a one-digit day', 'Tue Dec  1 12:00:00 2026', 9 * 86_400_000],
    ['a date with trailing junk', 'Sun, 22 Nov 2026 12:01:30 GMT junk', undefined],
    ['an impossible date', 'Mon, 31 Feb 2027 00:00:00 GMT', undefined],
    ['a non-GMT zone', 'Sun, 22 Nov 2026 12:01:30 PST', undefined],
    ['a bare year', '2027', 2_027_000],
    ['garbage', 'soon', undefined],
  ];
  for (const [name, header, expected] of cases) {
    it(`${name}: ${JSON.stringify(header)} → ${expected}`, () => assert.equal(parseRetryAfter(header, now), expected));
  }
});
