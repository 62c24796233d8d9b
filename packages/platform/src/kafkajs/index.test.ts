import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { describe, it } from 'node:test';
import { Kafka } from './index.js';
import { withoutAbortedRecords } from './aborted-transactions-filter.js';
import { crc32c } from './crc32c.js';
import { encodeRecord, recordBatchModule } from './record-batch-encoder.js';
import { createSendMessages } from './send-messages.js';

const require = createRequire(import.meta.url);

describe('kafkajs/index.ts', () => {
  it('puts every module correction where kafkajs requires it', () => {
    const replaced: Array<[string, unknown]> = [
      ['kafkajs/src/consumer/filterAbortedMessages.js', withoutAbortedRecords],
      ['kafkajs/src/producer/sendMessages.js', createSendMessages],
      ['kafkajs/src/protocol/recordBatch/crc32C/index.js', crc32c],
      ['kafkajs/src/protocol/recordBatch/record/v0/index.js', encodeRecord],
      ['kafkajs/src/protocol/recordBatch/v0/index.js', recordBatchModule],
    ];
    for (const [request, correction] of replaced) assert.equal(require(request), correction, request);
  });

  it('patches ConsumerGroup (recoverFromFetch, heartbeat), Cluster, Broker and OffsetManager', () => {
    const marks: Array<[string, string]> = [
      ['kafkajs/src/consumer/consumerGroup.js', 'switchyard.kafkajs.fetchBrokerLoss'],
      ['kafkajs/src/consumer/consumerGroup.js', 'switchyard.kafkajs.heartbeat'],
      ['kafkajs/src/cluster/index.js', 'switchyard.kafkajs.coordinatorCache'],
      ['kafkajs/src/broker/index.js', 'switchyard.kafkajs.concurrentTransactionsRetry'],
      ['kafkajs/src/consumer/offsetManager/index.js', 'switchyard.kafkajs.offsetManagerCoordinator'],
    ];
    for (const [request, mark] of marks) {
      const exported = require(request) as { prototype: Record<symbol, unknown> };
      assert.equal(exported.prototype[Symbol.for(mark)], true, `${request}: ${mark}`);
    }
  });

  it("hands on kafkajs's own API", () => {
    assert.equal(Kafka, (require('kafkajs') as { Kafka: unknown }).Kafka);
  });
});
