import assert from 'node:assert/strict';
import { test } from 'node:test';
import { bucketQuantile, parseServiceLogLine } from './service-stats.js';

test('bucketQuantile interpolates within the bucket of the window\'s observations', () => {
  // Cumulative counts, as /metrics gives them: 10 before the window, 110 after (100 in it).
  const before = new Map([[0.005, 10], [0.01, 10], [0.05, 10], [Infinity, 10]]);
  const after = new Map([[0.005, 30], [0.01, 70], [0.05, 110], [Infinity, 110]]);
  // 20 at ≤ 5 ms, 40 in (5, 10], 40 in (10, 50]: the 50th of 100 is three quarters into (5, 10].
  assert.equal(bucketQuantile(before, after, 0.5), 0.005 + 0.005 * 0.75);
  assert.equal(bucketQuantile(before, after, 0.99), 0.01 + 0.04 * (39 / 40));
  assert.ok(Number.isNaN(bucketQuantile(after, after, 0.5)), 'nothing observed in the window');
});

test('parseServiceLogLine: a pino line\'s message, outcome and error as one key, its time, a summary\'s reasons; other text as it is', () => {
  assert.deepEqual(parseServiceLogLine('{"time":"2026-11-29T10:00:00.000Z","msg":"delivery attempt failed","outcome":"timeout","err":{"message":"boom"}}'), { key: 'delivery attempt failed: timeout: boom', at: Date.parse('2026-11-29T10:00:00.000Z') });
  assert.deepEqual(parseServiceLogLine('{"msg":"3 more","byReason":{"timeout":3}}').byReason, { timeout: 3 });
  const plain = parseServiceLogLine('not json');
  assert.equal(plain.key, 'not json');
  assert.ok(Number.isNaN(plain.at));
});
