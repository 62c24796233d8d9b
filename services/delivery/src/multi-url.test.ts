import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { combineUrlOutcomes, type TaskVerdict, type UrlOutcome } from './multi-url.js';
import { classifyAttempt } from './outcome.js';

const urls = ['https://a.example/h', 'https://b.example/h', 'https://c.example/h', 'https://d.example/h', 'https://e.example/h'];
/** One status per URL, in order; a status with a Retry-After as [status, ms]. */
const answered = (...statuses: Array<number | [number, number]>): UrlOutcome[] =>
  statuses.map((s, i) => {
    const [status, retryAfterMs] = Array.isArray(s) ? s : [s, undefined];
    const outcome = classifyAttempt(retryAfterMs === undefined ? { kind: 'response', status, bodyExcerpt: '' } : { kind: 'response', status, bodyExcerpt: '', retryAfterMs });
    return { url: urls[i]!, outcome };
  });

describe('combineUrlOutcomes: the five-URL rule', () => {
  const cases: Array<[string, UrlOutcome[], TaskVerdict]> = [
    ['one URL accepts', answered(200), { verdict: 'accepted', acceptedUrl: urls[0]! }],
    ['first four 500, fifth 200 → accepted', answered(500, 500, 500, 500, 200), { verdict: 'accepted', acceptedUrl: urls[4]! }],
    ['one 200 among 404s → accepted, failures not kept', answered(404, 200, 404), { verdict: 'accepted', acceptedUrl: urls[1]! }],
    ['all five 500 → retry all five', answered(500, 500, 500, 500, 500), { verdict: 'retry', retryUrls: urls, reason: 'status_500' }],
    ['404 and 500 mixed → retry only the 500s', answered(404, 500, 404, 503, 410),
      { verdict: 'retry', retryUrls: [urls[1]!, urls[3]!], reason: 'status_500' }],
    ['a redirect and a timeout → retry only the timeout',
      [{ url: urls[0]!, outcome: classifyAttempt({ kind: 'response', status: 301, bodyExcerpt: '' }) }, { url: urls[1]!, outcome: classifyAttempt({ kind: 'error', error: 'timeout', message: '5 s' }) }],
      { verdict: 'retry', retryUrls: [urls[1]!], reason: 'timeout' }],
    ['Retry-After: the largest hint of the retried URLs', answered([429, 30_000], 500, [503, 120_000], [404, 999_000]),
      { verdict: 'retry', retryUrls: [urls[0]!, urls[1]!, urls[2]!], reason: 'status_429', retryAfterMs: 120_000 }],
    ['all 404 → permanent', answered(404, 404, 404, 404, 404), {
      verdict: 'permanent', reason: 'permanent_status',
      failures: urls.map((url) => ({ url, reason: 'permanent_status' as const })),
    }],
    ['all permanent → the reason of the first failure', answered(302, 404), {
      verdict: 'permanent', reason: 'redirect',
      failures: [{ url: urls[0]!, reason: 'redirect' }, { url: urls[1]!, reason: 'permanent_status' }],
    }],
    ['the same URL twice is retried once', [...answered(500), ...answered(502)], { verdict: 'retry', retryUrls: [urls[0]!], reason: 'status_500' }],
  ];
  for (const [name, results, expected] of cases) {
    it(name, () => assert.deepEqual(combineUrlOutcomes(results), expected));
  }

  it('refuses a task with no URL outcomes', () => {
    assert.throws(() => combineUrlOutcomes([]), RangeError);
  });
});
