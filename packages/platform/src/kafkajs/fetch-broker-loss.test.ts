import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { describe, it } from 'node:test';
import './index.js';

const require = createRequire(import.meta.url);
const { prototype } = require('kafkajs/src/consumer/consumerGroup.js') as { prototype: { recoverFromFetch(this: unknown, e: Error): Promise<void> } };
const { KafkaJSConnectionError, KafkaJSRequestTimeoutError, KafkaJSError } = require('kafkajs/src/errors.js') as Record<string, new (message: string, extra?: object) => Error>;

/** Just what recoverFromFetch touches of a ConsumerGroup. */
function group() {
  const warnings: string[] = [];
  return { warnings, self: { groupId: 'g', logger: { warn: (message: string) => warnings.push(message), debug() {}, info() {}, error() {} }, cluster: {} } };
}

describe('kafkajs fetching from a lost broker', () => {
  it('an unreachable broker (refused, timed out) ends that fetch empty after a short wait instead of failing the consumer', async () => {
    for (const error of [new KafkaJSConnectionError!('Connection error: connect ECONNREFUSED 127.0.0.1:1', { broker: '127.0.0.1:1', code: 'ECONNREFUSED' }), new KafkaJSRequestTimeoutError!('Request Fetch(key: 1, version: 11) timed out', { broker: '127.0.0.1:1' })]) {
      const { self, warnings } = group();
      const started = Date.now();
      await prototype.recoverFromFetch.call(self, error);
      assert.ok(Date.now() - started >= 400, 'waits before the next fetch of that broker');
      assert.equal(warnings.length, 1);
    }
  });

  it('any other error still goes to kafkajs (and out of the fetch)', async () => {
    const { self } = group();
    await assert.rejects(prototype.recoverFromFetch.call(self, new KafkaJSError!('something else')), /something else/);
  });
});
