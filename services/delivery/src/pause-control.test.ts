import assert from 'node:assert/strict';
import { connect, createServer, type AddressInfo } from 'node:net';
import { describe, it } from 'node:test';
import type { AvroCodec } from '@switchyard/platform/codec/avro-codec';
import { KeyedLimiter } from './in-flight-limits.js';
import { DEFERRALS, PauseControl } from './pause-control.js';
import { StallDetector } from './stall-detector.js';
import { batchOf, deliveryOver, FakeConsumer, testMetrics, TOPIC } from './test-support/fake-consumer.js';
import type { TaskRunner } from './task-runner.js';

describe('DeliveryConsumer and a starved event loop', () => {
  it('a full destination whose answers wait behind a blocked event loop is not taken for hung: its partitions stay paused', async () => {
    const consumer = new FakeConsumer();
    let deferred = 0;
    const answers: Array<() => void> = [];
    let n = 0;
    const codec = { decodeKnown: () => ({ name: 'io.switchyard.pipeline.DeliveryTask', value: { taskId: `m${n++}:d1`, destinationId: 'd1', notBefore: null } }) } as unknown as AvroCodec;
    const runner = {
      rateLimitOf: () => undefined, circuitOpen: () => false,
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

describe('PauseControl', () => {
  /** Pause control over the fake consumer; destinations have 1 request slot and a queue of 4. */
  function pauses() {
    const consumer = new FakeConsumer();
    const metrics = testMetrics();
    const stalls = new StallDetector();
    const perDestination = new KeyedLimiter(1);
    let stopping = false;
    const control = new PauseControl({ consumer, metrics, clock: Date.now, stalls, perDestination, maxWaitingPerDestination: 4, stopping: () => stopping });
    return { consumer, metrics, stalls, perDestination, control, stop: () => { stopping = true; } };
  }
  const p = (partition: number) => [{ topic: TOPIC, partitions: [partition] }];
  const waitingGauge = async (metrics: ReturnType<typeof testMetrics>) => (await metrics.waiting.get()).values[0]?.value;

  it('a record not due pauses its partition at that record, and a timer resumes it when due', async () => {
    const { consumer, metrics, control } = pauses();
    control.waitUntilDue(TOPIC, 0, '7', 30);
    assert.deepEqual(consumer.pauses, [p(0)]);
    assert.deepEqual(consumer.seeks, [{ topic: TOPIC, partition: 0, offset: '7' }]);
    assert.equal(await waitingGauge(metrics), 1);
    await new Promise((r) => setTimeout(r, 60));
    assert.deepEqual(consumer.resumed, [p(0)]);
    assert.equal(await waitingGauge(metrics), 0);
  });

  it('a full destination holds its partitions until its queue is down to half', async () => {
    const { consumer, perDestination, control } = pauses();
    assert.ok(perDestination.tryAcquire('d1'));
    const queued = Array.from({ length: 4 }, () => perDestination.acquire('d1'));
    control.waitForDestination('d1', TOPIC, 0, '5');
    control.waitForDestination('d1', TOPIC, 1, '9');
    assert.deepEqual(consumer.seeks, [{ topic: TOPIC, partition: 0, offset: '5' }, { topic: TOPIC, partition: 1, offset: '9' }]);
    perDestination.release('d1'); // three wait: more than half of 4
    control.resumeDrained('d1');
    assert.deepEqual(consumer.resumed, []);
    perDestination.release('d1'); // two wait
    control.resumeDrained('d1');
    assert.deepEqual(consumer.resumed, [[...p(0), ...p(1)]]);
    for (let i = 0; i < 3; i++) perDestination.release('d1');
    await Promise.all(queued);
    control.resumeDrained('d1');
    assert.equal(consumer.resumed.length, 1, 'resumed once');
  });

  it('a partition also waiting until a record is due is left to its timer', () => {
    const { consumer, control } = pauses();
    control.waitForDeferrals(TOPIC, 0, '5');
    control.waitForDeferrals(TOPIC, 1, '5');
    control.waitUntilDue(TOPIC, 1, '6', 60_000);
    control.resumeBlocked(DEFERRALS);
    assert.deepEqual(consumer.resumed, [p(0)]);
    control.stop();
  });

  it('a destination that stops finishing requests is found hung: its partitions are read again', async () => {
    const { consumer, stalls, control } = pauses();
    stalls.started('hung', Date.now());
    control.waitForDestination('hung', TOPIC, 0, '5');
    await new Promise((r) => setTimeout(r, 400)); // the 150 ms floor, 50 more, and the I/O after it
    assert.deepEqual(consumer.resumed, [p(0)]);
    assert.equal(stalls.confirmedStalled('hung'), true);
  });

  it('a new assignment drops the timers of partitions gone and every hold; stale pauses are resumed', async () => {
    const { consumer, control } = pauses();
    control.waitUntilDue(TOPIC, 0, '5', 20);
    control.waitUntilDue(TOPIC, 1, '5', 60_000);
    control.waitForDeferrals(TOPIC, 2, '5');
    control.retainOnly(new Set([`${TOPIC}:1`, `${TOPIC}:2`]));
    control.resumeBlocked(DEFERRALS);
    await new Promise((r) => setTimeout(r, 40));
    assert.deepEqual(consumer.resumed, [], 'partition 0 is gone, partition 2 holds nothing any more');
    consumer.pausedNow = [{ topic: TOPIC, partitions: [1, 2] }];
    control.resumeStale();
    assert.deepEqual(consumer.resumed, [p(2)], 'partition 1 still has its timer');
    control.stop();
  });

  it('after stop() no timer or drain resumes anything', async () => {
    const { consumer, control, stop } = pauses();
    control.waitUntilDue(TOPIC, 0, '5', 20);
    control.waitForDeferrals(TOPIC, 1, '5');
    stop();
    control.stop();
    control.resumeBlocked(DEFERRALS);
    await new Promise((r) => setTimeout(r, 40));
    assert.deepEqual(consumer.resumed, []);
  });
});
