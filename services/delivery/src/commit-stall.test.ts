import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { AvroCodec } from '@switchyard/platform/codec/avro-codec';
import { createLogger } from '@switchyard/platform/logger';
import { Registry } from '@switchyard/platform/metrics';
import type { DeliveryTask } from '@switchyard/platform/schemas/generated';
import { DeliveryConsumer } from './delivery-consumer.js';
import { deliveryMetrics } from './delivery-metrics.js';
import { batchOf, FakeConsumer, TOPIC } from './test-support/fake-consumer.js';
import type { TaskRunner } from './task-runner.js';

describe('DeliveryConsumer and stalled offset commits', () => {
  it('a commit unanswered for 2 s (kafkajs retrying it while a new coordinator loads) stops new tasks until it is answered', async () => {
    const consumer = new FakeConsumer();
    let unanswered: Array<() => void> | undefined = [];
    consumer.onCommit = async () => { if (unanswered) await new Promise<void>((resolve) => { unanswered!.push(resolve); }); };
    const answerCommits = () => { const waiting = unanswered ?? []; unanswered = undefined; for (const answer of waiting) answer(); };
    let now = 1_000_000;
    const sent: string[] = [];
    let n = 0;
    const codec = { decodeKnown: () => ({ name: 'io.switchyard.pipeline.DeliveryTask', value: { taskId: `m${n++}:d1`, destinationId: 'd1', notBefore: null } }) } as unknown as AvroCodec;
    const runner = { rateLimitOf: () => undefined, circuitOpen: () => false, run: async (t: DeliveryTask) => { sent.push(t.taskId); } } as unknown as TaskRunner;
    const delivery = new DeliveryConsumer({
      client: consumer, codec, runner, topics: [TOPIC], deliveryTopic: TOPIC, readRange: async () => [], metrics: deliveryMetrics(new Registry(), { retryTiers: 1 }),
      logger: createLogger({ service: 'test', level: 'silent' }), clock: () => now, maxInFlight: 10, maxInFlightPerDestination: 10, maxWaitingPerDestination: 10, commitIntervalMs: 20,
      setAside: async () => undefined,
    });
    await delivery.start();
    consumer.join('member-1', [0]);
    await consumer.eachBatch!(batchOf(['5']).payload);
    await new Promise((r) => setImmediate(r));
    assert.deepEqual([sent.length, consumer.commits.length], [1, 1], 'sent, and its commit under way');
    now += 1000;
    await consumer.eachBatch!(batchOf(['6']).payload);
    assert.equal(sent.length, 2, 'a commit 1 s old holds nothing back');
    now += 1500;
    await consumer.eachBatch!(batchOf(['7']).payload);
    assert.equal(sent.length, 2, 'held back: the commit is 2.5 s old');
    assert.deepEqual(consumer.seeks.at(-1), { topic: TOPIC, partition: 0, offset: '7' }, 'read again later');
    answerCommits();
    await new Promise((r) => setImmediate(r));
    await consumer.eachBatch!(batchOf(['7']).payload);
    assert.equal(sent.length, 3, 'sending again once the commit was answered');
    await delivery.stop(10);
  });
});
