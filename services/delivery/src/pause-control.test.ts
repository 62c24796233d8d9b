import assert from 'node:assert/strict';
import { connect, createServer, type AddressInfo } from 'node:net';
import { describe, it } from 'node:test';
import type { AvroCodec } from '@switchyard/platform/codec/avro-codec';
import { batchOf, deliveryOver, FakeConsumer, TOPIC } from './test-support/fake-consumer.js';
import type { TaskRunner } from './task-runner.js';

describe('DeliveryConsumer and a starved event loop', () => {
  it('a full destination whose answers wait behind a blocked event loop is not taken for hung: its partitions stay paused', async () => {
    const consumer = new FakeConsumer();
    let deferred = 0;
    const answers: Array<() => void> = [];
    let n = 0;
    const codec = { decodeKnown: () => ({ name: 'io.switchyard.pipeline.DeliveryTask', value: { taskId: `m${n++}:d1`, destinationId: 'd1', notBefore: null } }) } as unknown as AvroCodec;
    const runner = {
      circuitOpen: () => false,
      defer: async () => { deferred++; },
      run: () => new Promise<void>((resolve) => { answers.push(resolve); }),
    } as unknown as TaskRunner;
    const delivery = deliveryOver(consumer, codec, runner, { maxInFlight: 100, maxInFlightPerDestination: 1, maxWaitingPerDestination: 4 });
    await delivery.start();
    consumer.join('member-1', [0]);
    // One request in flight, four waiting: full. The sixth record pauses the partition and the
    // stall watch starts (150 ms floor + 50).
    await consumer.eachBatch!(batchOf(['0', '1', '2', '3', '4', '5']).payload);
    assert.deepEqual(consumer.seeks.at(-1), { topic: TOPIC, partition: 0, offset: '5' });

    // The answer to the request in flight arrives as I/O while the event loop is blocked past the
    // watch's deadline (a long GC pause, a starved process); it is only read after the loop resumes.
    const server = createServer((socket) => socket.once('data', () => answers.shift()!()));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const client = connect((server.address() as AddressInfo).port, '127.0.0.1');
    await new Promise((r) => client.once('connect', r));
    await new Promise((r) => setTimeout(r, 20));
    client.write('answer');
    const blockedUntil = Date.now() + 300;
    while (Date.now() < blockedUntil) { /* the event loop is blocked */ }
    await new Promise((r) => setTimeout(r, 100));
    client.destroy();
    server.close();
    assert.deepEqual(consumer.resumed, [], 'the destination answered: its partition waits for it to drain, not for a deferral');
    assert.equal(deferred, 0);
  });
});
