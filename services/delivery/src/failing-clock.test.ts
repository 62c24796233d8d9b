import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { addAttempt, nextHealth } from './failing-clock.js';

describe('failing clock', () => {
  it('starts at the first failure after a success', () => {
    assert.deepEqual(nextHealth(undefined, addAttempt(undefined, false, 100)), { failingSince: 100, lastFailureAt: 100 });
    assert.deepEqual(nextHealth({ failingSince: null, lastFailureAt: 50 }, addAttempt(undefined, false, 100)), { failingSince: 100, lastFailureAt: 100 });
  });

  it('keeps its start while failures go on, reporting them at most every refresh interval', () => {
    const known = { failingSince: 100, lastFailureAt: 100 };
    assert.equal(nextHealth(known, addAttempt(undefined, false, 5_000), 10_000), undefined);
    assert.deepEqual(nextHealth(known, addAttempt(undefined, false, 10_100), 10_000), { failingSince: 100, lastFailureAt: 10_100 });
  });

  it('is reset by any success', () => {
    assert.deepEqual(nextHealth({ failingSince: 100, lastFailureAt: 900 }, addAttempt(undefined, true, 1000)), { failingSince: null, lastFailureAt: 900 });
  });

  it('writes nothing for a success while nothing failed', () => {
    assert.equal(nextHealth(undefined, addAttempt(undefined, true, 1)), undefined);
    assert.equal(nextHealth({ failingSince: null, lastFailureAt: null }, addAttempt(undefined, true, 1)), undefined);
  });

  it('restarts from a failure that followed a success pending in the same write', () => {
    const pending = addAttempt(addAttempt(addAttempt(undefined, false, 10), true, 20), false, 30);
    assert.deepEqual(nextHealth({ failingSince: 1, lastFailureAt: 5 }, pending), { failingSince: 30, lastFailureAt: 30 });
  });

  it('forgets failures before a later success', () => {
    const pending = addAttempt(addAttempt(undefined, false, 10), true, 20);
    assert.deepEqual(pending, { succeeded: true, failedAt: null });
    assert.deepEqual(nextHealth({ failingSince: 1, lastFailureAt: 5 }, pending), { failingSince: null, lastFailureAt: 5 });
  });
});
