import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { it } from 'node:test';
import { AnalyticsError, ERROR_CODES } from './errors.js';

it('the README lists exactly the codes of the catalogue, each as thrown or delivered', () => {
  const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
  // Rows of the error tables: | `CODE` | thrown/delivered | ...
  const rows = [...readme.matchAll(/^\| `([A-Z_]+)` \| (thrown|delivered) \|/gm)].map((m) => [m[1], m[2]]);
  assert.deepEqual(new Map(rows as [string, string][]), new Map(Object.entries(ERROR_CODES).map(([code, e]) => [code, e.kind])));
});

it('an AnalyticsError carries its code, retriable flag, details and cause', () => {
  const cause = new Error('boom');
  const err = new AnalyticsError('HTTP_ERROR', 'the server answered 503', { status: 503, attempts: 3, retriable: true, cause });
  assert.ok(err instanceof Error);
  assert.deepEqual({ name: err.name, code: err.code, retriable: err.retriable, status: err.status, attempts: err.attempts, cause: err.cause }, { name: 'AnalyticsError', code: 'HTTP_ERROR', retriable: true, status: 503, attempts: 3, cause });
  assert.equal(new AnalyticsError('QUEUE_FULL', 'x').retriable, true);
  assert.equal(new AnalyticsError('MISSING_EVENT', 'x', { field: 'event' }).field, 'event');
});
