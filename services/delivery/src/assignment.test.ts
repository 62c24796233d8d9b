import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, it } from 'node:test';
import type { AvroCodec } from '@switchyard/platform/codec/avro-codec';
import type { DeliveryTask } from '@switchyard/platform/schemas/generated';
import { batchOf, deferred, deliveryOver, FakeConsumer, TOPIC } from './test-support/fake-consumer.js';
import type { TaskRunner } from './task-runner.js';

function setup(groupOffsets: () => Promise<Map<string, bigint>>, answer: () => Promise<void> = async () => undefined) {
  const consumer = new FakeConsumer();
  const sent: string[] = [];
  const task = { taskId: 'm1:d1', destinationId: 'd1', notBefore: null } as unknown as DeliveryTask;
  const codec = { decodeKnown: () => ({ name: 'io.switchyard.pipeline.DeliveryTask', value: task }) } as unknown as AvroCodec;
  const runner = { circuitOpen: () => false, run: async (t: DeliveryTask) => { sent.push(t.taskId); await answer(); } } as unknown as TaskRunner;
  const delivery = deliveryOver(consumer, codec, runner, { maxInFlight: 10, maxInFlightPerDestination: 10, maxWaitingPerDestination: 10 }, groupOffsets);
  return { consumer, delivery, sent };
}

describe('DeliveryConsumer across rebalances', () => {
  it('a batch fetched before a rebalance and reached after it is neither sent nor resolved', async () => {
    const floor = deferred<Map<string, bigint>>();
    const { consumer, delivery, sent } = setup(() => floor.promise);
    await delivery.start();
    consumer.join('member-1', [0]);
    const { payload, resolved } = batchOf(['5', '6']);
    const handled = consumer.eachBatch!(payload); // waits for the group's offset of partition 0
    consumer.join('member-1', [1]); // partition 0 goes to another member meanwhile
    floor.resolve(new Map([[`${TOPIC}:0`, 5n]]));
    await handled;
    assert.deepEqual(sent, [], 'the other member sends these records now');
    assert.deepEqual(resolved, []);
  });

  it('the same batch with no rebalance in between is sent and resolved', async () => {
    const { consumer, delivery, sent } = setup(async () => new Map([[`${TOPIC}:0`, 5n]]));
    await delivery.start();
    consumer.join('member-1', [0]);
    const { payload, resolved } = batchOf(['5', '6']);
    await consumer.eachBatch!(payload);
    await new Promise((r) => setImmediate(r));
    assert.deepEqual(sent, ['m1:d1', 'm1:d1']);
    assert.deepEqual(resolved, ['6']);
  });

  it('when the group rebalances: in-flight tasks get a moment, what finished is committed, nothing new is sent until the next assignment', async () => {
    let release!: () => void;
    const pending = new Promise<void>((r) => { release = r; });
    const { consumer, delivery, sent } = setup(async () => new Map([[`${TOPIC}:0`, 5n]]), () => pending);
    await delivery.start();
    consumer.join('member-1', [0]);
    await consumer.eachBatch!(batchOf(['5', '6']).payload);
    assert.equal(sent.length, 2);
    const handOver = delivery.handOver(1000);
    setTimeout(release, 20); // both answers arrive while the member waits
    await handOver;
    assert.deepEqual(consumer.commits.at(-1), [{ topic: TOPIC, partition: 0, offset: '7' }]);
    const { payload, resolved } = batchOf(['7']);
    await consumer.eachBatch!(payload);
    assert.equal(sent.length, 2, 'nothing new while the group rebalances');
    assert.deepEqual(resolved, []);
    consumer.join('member-1', [0]);
    await consumer.eachBatch!(batchOf(['7']).payload);
    assert.equal(sent.length, 3, 'sending again once assigned');
  });

  it('a heartbeat answered after a freeze confirms membership as of when it was sent: the member checks again before sending', async () => {
    const { consumer, delivery, sent } = setup(async () => new Map([[`${TOPIC}:0`, 5n]]));
    await delivery.start();
    consumer.join('member-1', [0]);
    const sentBeforeFreeze = Date.now() - 14_000;
    consumer.emit(consumer.events.REQUEST, { apiName: 'Heartbeat', sentAt: sentBeforeFreeze });
    consumer.emit(consumer.events.HEARTBEAT, {});
    const { payload } = batchOf(['5']);
    let checked = 0;
    payload.heartbeat = async () => { checked++; throw new Error('The coordinator is not aware of this member'); };
    await assert.rejects(consumer.eachBatch!(payload), /not aware/);
    assert.equal(checked, 1);
    assert.deepEqual(sent, []);
  });
});

describe('DeliveryConsumer: an attempt that fails across a freeze', () => {
  /** A runner whose one attempt fails once `answered` resolves, then asks whether it may write the retry record. */
  function frozenAttempt() {
    const consumer = new FakeConsumer();
    const answered = deferred<void>();
    const followUps: boolean[] = [];
    const task = { taskId: 'm1:d1', destinationId: 'd1', notBefore: null } as unknown as DeliveryTask;
    const codec = { decodeKnown: () => ({ name: 'io.switchyard.pipeline.DeliveryTask', value: task }) } as unknown as AvroCodec;
    const runner = {
      circuitOpen: () => false,
      run: async (_task: DeliveryTask, mayFollowUp: () => Promise<boolean>) => { await answered.promise; const may = await mayFollowUp(); followUps.push(may); return may; },
    } as unknown as TaskRunner;
    const delivery = deliveryOver(consumer, codec, runner, { maxInFlight: 10, maxInFlightPerDestination: 10, maxWaitingPerDestination: 10 });
    /** The process was frozen 14 s: the last heartbeat that succeeded was sent before it. */
    const freeze = () => {
      consumer.emit(consumer.events.REQUEST, { apiName: 'Heartbeat', sentAt: Date.now() - 14_000 });
      consumer.emit(consumer.events.HEARTBEAT, {});
    };
    return { consumer, delivery, answered, followUps, freeze };
  }
  const committed = (consumer: FakeConsumer) => consumer.commits.flat().map((c) => c.offset);

  it('expelled meanwhile (kafkajs rejoins under a new member id): no retry record, the offset stays uncommitted for the next owner', async () => {
    const { consumer, delivery, answered, followUps, freeze } = frozenAttempt();
    await delivery.start();
    consumer.join('member-1', [0]);
    await consumer.eachBatch!(batchOf(['5']).payload);
    freeze();
    answered.resolve(); // the 503 is read as the process resumes
    await sleep(60);
    assert.deepEqual(followUps, [], 'membership unconfirmed: the follow-up waits');
    consumer.join('member-2', [0]);
    await sleep(60);
    assert.deepEqual(followUps, [false]);
    assert.ok(!committed(consumer).includes('6'), 'the task is not committed');
  });

  it('a heartbeat sent after the freeze confirms membership: the retry record is written and the offset committed', async () => {
    const { consumer, delivery, answered, followUps, freeze } = frozenAttempt();
    await delivery.start();
    consumer.join('member-1', [0]);
    await consumer.eachBatch!(batchOf(['5']).payload);
    freeze();
    answered.resolve();
    await sleep(60);
    assert.deepEqual(followUps, []);
    consumer.emit(consumer.events.REQUEST, { apiName: 'Heartbeat', sentAt: Date.now() });
    consumer.emit(consumer.events.HEARTBEAT, {});
    await sleep(60);
    assert.deepEqual(followUps, [true]);
    assert.ok(committed(consumer).includes('6'));
  });
});
