import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { createSendMessages, groupMessagesPerPartition } from './send-messages.js';

const require = createRequire(import.meta.url);
const createRetry = require('kafkajs/src/retry') as (options: object) => Parameters<typeof createSendMessages>[0]['retrier'];
const { createErrorFromCode } = require('kafkajs/src/protocol/error') as { createErrorFromCode: (code: number) => Error };
const NOT_LEADER_FOR_PARTITION = 6;
const CONCURRENT_TRANSACTIONS = 51;

interface ProduceCall {
  nodeId: number;
  partitions: Array<{ partition: number; firstSequence: number; count: number }>;
}

/** A cluster of fake brokers: `leaders[p]` leads partition p; `answer` decides each produce's fate. */
function fakeCluster(leaders: number[], answer: (call: ProduceCall, index: number) => Promise<void>) {
  const calls: ProduceCall[] = [];
  let sequences = new Map<number, number>();
  let producerId = 1;
  const broker = (nodeId: number) => ({
    nodeId,
    async produce({ topicData }: { topicData: Array<{ topic: string; partitions: Array<{ partition: number; firstSequence: number; messages: unknown[] }> }> }) {
      const call = { nodeId, partitions: topicData.flatMap(({ partitions }) => partitions.map(({ partition, firstSequence, messages }) => ({ partition, firstSequence, count: messages.length }))) };
      calls.push(call);
      await answer(call, calls.length - 1);
      return { topics: topicData.map(({ topic, partitions }) => ({ topicName: topic, partitions: partitions.map(({ partition }) => ({ partition, errorCode: 0, baseOffset: '0' })) })) };
    },
  });
  const context = {
    logger: { debug() {}, error() {} },
    cluster: {
      async refreshMetadataIfNecessary() {},
      async refreshMetadata() {},
      async addMultipleTargetTopics() {},
      findTopicPartitionMetadata: () => leaders.map((leader, partitionId) => ({ partitionId, leader })),
      findBroker: async ({ nodeId }: { nodeId: number }) => broker(nodeId),
      removeBroker() {},
      isConnected: () => true,
      async connect() {},
    },
    partitioner: ({ message }: { message: { partition: number } }) => message.partition,
    eosManager: {
      isTransactional: () => false,
      getTransactionalId: () => '',
      getProducerId: () => producerId,
      isInitialized: () => true,
      async initProducerId() { producerId++; sequences = new Map(); },
      getProducerEpoch: () => 0,
      async addPartitionsToTransaction() {},
      getSequence: (_topic: string, partition: number) => sequences.get(partition) ?? 0,
      updateSequence: (_topic: string, partition: number, increment: number) => void sequences.set(partition, (sequences.get(partition) ?? 0) + increment),
      async acquireBrokerLock() {},
      releaseBrokerLock() {},
    },
    retrier: createRetry({ initialRetryTime: 1, maxRetryTime: 5, retries: 50 }),
  };
  return { calls, send: createSendMessages(context), leaders, producerId: () => producerId };
}

const oneMessagePer = (partitions: number) => [{ topic: 'out', messages: Array.from({ length: partitions }, (_, partition) => ({ partition, value: `${partition}` })) }];

describe("kafkajs's sendMessages, replaced", () => {
  it('a retry waits for every request of the failed attempt and resends only what was not written', async () => {
    // Partition 0 on broker 1 fails at once; partition 1 on broker 2 answers 30 ms later.
    const { calls, send } = fakeCluster([1, 2], async (call, index) => {
      if (index === 0 && call.nodeId === 1) throw createErrorFromCode(CONCURRENT_TRANSACTIONS);
      if (call.nodeId === 2) await sleep(30);
    });
    const results = await send({ acks: -1, topicMessages: oneMessagePer(2) });
    assert.deepEqual(results.map((result) => result.partition).sort(), [0, 1]);
    assert.deepEqual(calls.map((call) => [call.nodeId, call.partitions.map((p) => `${p.partition}@${p.firstSequence}`)]), [
      [1, ['0@0']],
      [2, ['1@0']],
      [1, ['0@0']], // the same sequence number again, and broker 2 is not asked twice
    ]);
  });

  it('a partition whose leader moved to a broker that already answered is still written', async () => {
    const { calls, send, leaders } = fakeCluster([1, 2], async (call, index) => {
      if (index === 0 && call.nodeId === 1) {
        leaders[0] = 2; // broker 1 lost the leadership of partition 0 to broker 2
        throw createErrorFromCode(NOT_LEADER_FOR_PARTITION);
      }
    });
    await send({ acks: -1, topicMessages: oneMessagePer(2) });
    const written = calls.slice(2).flatMap((call) => call.partitions.map((p) => [call.nodeId, p.partition]));
    assert.deepEqual(written, [[2, 0]]);
  });

  it('after a send that gave up with records perhaps written, an idempotent producer takes a new producer id', async () => {
    const { calls, send, producerId } = fakeCluster([1], async (_call, index) => {
      if (index === 0) throw Object.assign(new Error('request timed out'), { retriable: false });
    });
    await assert.rejects(send({ acks: -1, topicMessages: oneMessagePer(1) }), /timed out/);
    assert.equal(producerId(), 1);
    await send({ acks: -1, topicMessages: oneMessagePer(1) });
    assert.equal(producerId(), 2, 'sequence 0 of the old producer id may be written: never reused for other records');
    assert.equal(calls.length, 2);
  });

  it('a partition without a leader fails the attempt instead of being skipped', async () => {
    const { calls, send, leaders } = fakeCluster([1, -1], async () => {});
    const sending = send({ acks: -1, topicMessages: oneMessagePer(2) });
    await sleep(10);
    assert.equal(calls.length, 0, 'nothing is sent while a partition has no leader');
    leaders[1] = 1;
    await sending;
    assert.deepEqual(calls.flatMap((call) => call.partitions.map((p) => p.partition)).sort(), [0, 1]);
  });
});

describe('groupMessagesPerPartition, linear', () => {
  it("groups as kafkajs's own does: the same partitions, each with its messages in order", () => {
    const theirs = require('kafkajs/src/producer/groupMessagesPerPartition') as typeof groupMessagesPerPartition;
    const partitionMetadata = [0, 1, 2].map((partitionId) => ({ partitionId, leader: 0 }));
    const messages = Array.from({ length: 1000 }, (_, i) => ({ key: `k${i % 17}`, value: String(i) }));
    const partitioner = ({ message }: { message: { key: string } }) => Number(message.key.slice(1)) % 3;
    const input = { topic: 't', partitionMetadata, messages, partitioner };
    assert.deepEqual(groupMessagesPerPartition(input), theirs(input));
    assert.deepEqual(groupMessagesPerPartition({ ...input, partitionMetadata: [] }), {});
  });
});
