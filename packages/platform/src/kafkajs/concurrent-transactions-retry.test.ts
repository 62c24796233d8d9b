import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { describe, it } from 'node:test';
import { CONCURRENT_TRANSACTIONS_MESSAGE } from './index.js';
import { retryConcurrentTransactions } from './concurrent-transactions-retry.js';
import { callBroker, fakeBroker } from './test-support/fake-coordinator.js';

const require = createRequire(import.meta.url);
const { createErrorFromCode } = require('kafkajs/src/protocol/error.js') as { createErrorFromCode(code: number): Error };

describe('kafkajs transactions refused with CONCURRENT_TRANSACTIONS', () => {
  it('retries AddPartitionsToTxn refused with CONCURRENT_TRANSACTIONS within milliseconds', async () => {
    let refusals = 3;
    const b = fakeBroker(1, async () => { if (refusals-- > 0) throw createErrorFromCode(51); return { ok: true }; });
    const started = Date.now();
    assert.deepEqual(await callBroker(b, 'addPartitionsToTxn'), { ok: true });
    assert.ok(Date.now() - started < 500, 'kafkajs alone waited 200-300 ms per refusal: 600 ms or more for three');
  });

  it('gives CONCURRENT_TRANSACTIONS back to kafkajs when it persists, and lets any other error through at once', async () => {
    let tries = 0;
    await assert.rejects(retryConcurrentTransactions(async () => { tries++; throw createErrorFromCode(51); }, [1, 1]), (e: Error) => e.message === CONCURRENT_TRANSACTIONS_MESSAGE);
    assert.equal(tries, 3);
    tries = 0;
    await assert.rejects(retryConcurrentTransactions(async () => { tries++; throw createErrorFromCode(47); }, [1, 1]));
    assert.equal(tries, 1);
  });
});
