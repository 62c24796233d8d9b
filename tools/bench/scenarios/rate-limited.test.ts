import assert from 'node:assert/strict';
import { test } from 'node:test';
import { arrivalsBetween, limitBound } from './rate-limited.js';

test('arrivalsBetween: arrivals within the window, both ends included', () => {
  const arrivals = new Map([['a', 999], ['b', 1000], ['c', 1500], ['d', 2000], ['e', 2001]]);
  assert.equal(arrivalsBetween(arrivals, 1000, 2000), 3);
  assert.equal(arrivalsBetween(new Map(), 0, Infinity), 0);
});

test('limitBound: N × seconds, plus a tenth of N of burst and one request per instance', () => {
  assert.equal(limitBound(50, 1, 1), 56);
  assert.equal(limitBound(50, 0.61, 1), 36); // 30.5 + 5, rounded down, + 1
  assert.equal(limitBound(50, 2, 3), 108);
  assert.equal(limitBound(5, 1, 1), 6); // a tenth of 5 is half a request: no whole extra one
});
