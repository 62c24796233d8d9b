import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { withRetries } from './retry.js';

describe('withRetries', () => {
  it('tries again while the error is retriable, up to the limit, and returns the first success', async () => {
    let calls = 0;
    const retried: number[] = [];
    const value = await withRetries(async () => { if (++calls < 3) throw new Error('busy'); return 'ok'; }, { attempts: 5, delayMs: 1, retriable: () => true, onRetry: (_e, n) => retried.push(n) });
    assert.deepEqual([value, calls, retried], ['ok', 3, [1, 2]]);
  });

  it('throws at once when the error is not retriable, and the last error when attempts run out', async () => {
    let calls = 0;
    await assert.rejects(withRetries(async () => { calls++; throw new Error('fatal'); }, { attempts: 5, delayMs: 1, retriable: () => false }), /fatal/);
    assert.equal(calls, 1);
    calls = 0;
    await assert.rejects(withRetries(async () => { calls++; throw new Error(`busy ${calls}`); }, { attempts: 3, delayMs: 1, retriable: () => true }), /busy 3/);
    assert.equal(calls, 3);
  });
});
