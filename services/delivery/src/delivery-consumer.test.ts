import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { AvroCodec } from '@switchyard/platform/codec/avro-codec';
import { CodecError, RegistryUnavailableError } from '@switchyard/platform/errors';
import { createLogger } from '@switchyard/platform/logger';
import { Registry } from '@switchyard/platform/metrics';
import type { DeliveryTask } from '@switchyard/platform/schemas/generated';
import { DeliveryConsumer } from './delivery-consumer.js';
import { deliveryMetrics } from './delivery-metrics.js';
import { batchOf, deliveryOver, FakeConsumer, recordsOf, TOPIC } from './test-support/fake-consumer.js';
import type { TaskRunner } from './task-runner.js';

describe('DeliveryConsumer and a schema registry that does not answer', () => {
  /** A consumer whose codec must look up each record's writer schema; `lookup` answers for the registry. */
  function withLookup(lookup: () => Promise<unknown>) {
    const consumer = new FakeConsumer();
    const setAside: string[] = [];
    const sent: string[] = [];
    const codec = { decodeKnown: () => undefined, decode: lookup } as unknown as AvroCodec;
    const runner = { rateLimitOf: () => undefined, circuitOpen: () => false, run: async (t: DeliveryTask) => { sent.push(t.taskId); } } as unknown as TaskRunner;
    const delivery = new DeliveryConsumer({
      client: consumer, codec, runner, topics: [TOPIC], deliveryTopic: TOPIC, readRange: async () => [], metrics: deliveryMetrics(new Registry(), { retryTiers: 1 }),
      logger: createLogger({ service: 'test', level: 'silent' }), clock: Date.now, maxInFlight: 10, maxInFlightPerDestination: 10, maxWaitingPerDestination: 10, commitIntervalMs: 20,
      setAside: async (_value, _topic, _partition, offset) => { setAside.push(offset); }, groupOffsets: async () => new Map([[`${TOPIC}:0`, 5n]]),
    });
    return { consumer, delivery, setAside, sent };
  }

  it('the record is read again from its offset a moment later, not set aside (the registry was restarting)', async () => {
    const { consumer, delivery, setAside, sent } = withLookup(async () => { throw new RegistryUnavailableError('schema id 11 could not be looked up: connect ECONNREFUSED'); });
    await delivery.start();
    consumer.join('member-1', [0]);
    const { payload, resolved } = batchOf(['5', '6']);
    await consumer.eachBatch!(payload);
    assert.deepEqual(setAside, []);
    assert.deepEqual(sent, []);
    assert.deepEqual(resolved, []);
    assert.deepEqual(consumer.seeks, [{ topic: TOPIC, partition: 0, offset: '5' }]);
    await delivery.stop();
  });

  it('a schema id the registry answers it does not have is set aside, and the partition goes on', async () => {
    const { consumer, delivery, setAside } = withLookup(async () => { throw new CodecError('CODEC_UNKNOWN_SCHEMA', 'schema id 99 is not in the registry'); });
    await delivery.start();
    consumer.join('member-1', [0]);
    const { payload, resolved } = batchOf(['5', '6']);
    await consumer.eachBatch!(payload);
    assert.deepEqual(setAside, ['5', '6']);
    assert.deepEqual(resolved, ['6']);
    await delivery.stop();
  });
});

describe('DeliveryConsumer deferrals', () => {
  it('tasks deferred without a request have slots of their own: a burst of them never keeps healthy tasks from the global slots', async () => {
    const consumer = new FakeConsumer();
    const sent: string[] = [];
    let deferred = 0;
    const codec = {
      decodeKnown: (value: Buffer) => {
        const [destinationId, n] = value.toString().split(':');
        return { name: 'io.switchyard.pipeline.DeliveryTask', value: { taskId: `m${n}:${destinationId}`, destinationId, notBefore: null } };
      },
    } as unknown as AvroCodec;
    const runner = {
      rateLimitOf: () => undefined, circuitOpen: (t: DeliveryTask) => t.destinationId === 'hung',
      defer: () => { deferred++; return new Promise<void>(() => undefined); }, // retry writes that take a while
      run: async (t: DeliveryTask) => { sent.push(t.taskId); },
    } as unknown as TaskRunner;
    const delivery = deliveryOver(consumer, codec, runner, { maxInFlight: 10, maxInFlightPerDestination: 10, maxWaitingPerDestination: 10 });
    await delivery.start();
    consumer.join('member-1', [0, 1]);
    // maxInFlight 10: ten deferrals at once, and ten healthy tasks beside them.
    const batch = (partition: number, values: string[]) => recordsOf(TOPIC, partition, values.map((v, i) => ({ offset: String(i), value: Buffer.from(v) })));

    await consumer.eachBatch!(batch(0, Array.from({ length: 25 }, (_, i) => `hung:${i}`)));
    assert.equal(deferred, 10, 'at most maxInFlight deferrals at once');
    assert.deepEqual(consumer.seeks.at(-1), { topic: TOPIC, partition: 0, offset: '10' }, 'the rest is read again later');

    await consumer.eachBatch!(batch(1, Array.from({ length: 5 }, (_, i) => `ok:${i}`)));
    await new Promise((r) => setImmediate(r));
    assert.equal(sent.length, 5, 'healthy tasks still get the global slots beside 10 pending deferrals');
  });
});
