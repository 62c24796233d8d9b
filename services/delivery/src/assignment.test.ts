import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, it } from 'node:test';
import type { AvroCodec } from '@switchyard/platform/codec/avro-codec';
import type { DeliveryTask } from '@switchyard/platform/schemas/generated';
import { GroupAssignment } from './assignment.js';
import { PartitionOffsets } from '@switchyard/platform/consuming/offset-tracker';
import { batchOf, deferred, deliveryOver, FakeConsumer, silentLogger, TOPIC } from './test-support/fake-consumer.js';
import type { TaskRunner } from './task-runner.js';

function setup(groupOffsets: () => Promise<Map<string, bigint>>, answer: () => Promise<void> = async () => undefined) {
  const consumer = new FakeConsumer();
  const sent: string[] = [];
  const task = { taskId: 'm1:d1', destinationId: 'd1', notBefore: null } as unknown as DeliveryTask;
  const codec = { decodeKnown: () => ({ name: 'io.switchyard.pipeline.DeliveryTask', value: task }) } as unknown as AvroCodec;
  const runner = { rateLimitOf: () => undefined, circuitOpen: () => false, run: async (t: DeliveryTask) => { sent.push(t.taskId); await answer(); } } as unknown as TaskRunner;
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
    const rebalance = consumer.rebalance();
    setTimeout(release, 20); // both answers arrive while the member waits
    await rebalance;
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
    consumer.heartbeatSucceeded(sentBeforeFreeze);
    const { payload } = batchOf(['5']);
    let checked = 0;
    payload.handle.heartbeat = async () => { checked++; throw new Error('The coordinator is not aware of this member'); };
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
      rateLimitOf: () => undefined, circuitOpen: () => false,
      run: async (_task: DeliveryTask, mayFollowUp: () => Promise<boolean>) => { await answered.promise; const may = await mayFollowUp(); followUps.push(may); return may; },
    } as unknown as TaskRunner;
    const delivery = deliveryOver(consumer, codec, runner, { maxInFlight: 10, maxInFlightPerDestination: 10, maxWaitingPerDestination: 10 });
    /** The process was frozen 14 s: the last heartbeat that succeeded was sent before it. */
    const freeze = () => {
      consumer.heartbeatSucceeded(Date.now() - 14_000);
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
    consumer.heartbeatSucceeded(Date.now());
    await sleep(60);
    assert.deepEqual(followUps, [true]);
    assert.ok(committed(consumer).includes('6'));
  });
});

describe('GroupAssignment', () => {
  /** Membership over the fake consumer; partition 0 has read 5 to 7, 5 and 7 finished. */
  function membership(groupOffsets?: () => Promise<Map<string, bigint>>) {
    const consumer = new FakeConsumer();
    const offsets = new PartitionOffsets();
    const clock = { now: 1_000_000 };
    const group = new GroupAssignment({ consumer: consumer, offsets, logger: silentLogger(), clock: () => clock.now, ...(groupOffsets ? { groupOffsets } : {}), stopping: () => false });
    const read = () => {
      const tracker = offsets.tracker(TOPIC, 0);
      for (const offset of ['5', '6', '7']) tracker.track(offset);
      tracker.complete('5');
      tracker.complete('7');
    };
    return { consumer, offsets, clock, group, read };
  }
  const batch = (offsets: string[]) => ({ topic: TOPIC, partition: 0, messages: offsets.map((offset) => ({ offset, value: Buffer.from('x') })) });

  it('a member that stayed goes on past the last record it read; one that rejoined under a new id starts at its oldest unfinished record', () => {
    const { consumer, offsets, group, read } = membership();
    group.assign('member-1', { [TOPIC]: [0] });
    read();
    group.assign('member-1', { [TOPIC]: [0, 1] });
    assert.deepEqual(consumer.seeks, [{ topic: TOPIC, partition: 0, offset: '8' }]);
    assert.equal(offsets.tracker(TOPIC, 0).inFlight(), 1, 'what it has in flight still counts');
    group.assign('member-2', { [TOPIC]: [0] });
    assert.deepEqual(consumer.seeks.at(-1), { topic: TOPIC, partition: 0, offset: '6' });
    assert.equal(offsets.tracker(TOPIC, 0).inFlight(), 0, 'tracking starts over');
  });

  it('a partition is held without a break while the member keeps it under the same id', () => {
    const { group } = membership();
    const first = group.assign('member-1', { [TOPIC]: [0, 1] });
    assert.deepEqual([...first], [`${TOPIC}:0`, `${TOPIC}:1`]);
    const since = group.heldSinceOf(`${TOPIC}:0`);
    group.assign('member-1', { [TOPIC]: [0] });
    assert.equal(group.stillHeld(`${TOPIC}:0`, since), true);
    assert.equal(group.heldSinceOf(`${TOPIC}:1`), undefined);
    group.assign('member-1', { [TOPIC]: [0, 1] });
    assert.equal(group.heldSinceOf(`${TOPIC}:1`), 3, 'given back: held since the third assignment');
    group.assign('member-2', { [TOPIC]: [0] });
    assert.equal(group.stillHeld(`${TOPIC}:0`, since), false, 'rejoined: another member may have read it between');
    assert.equal(group.generation, 4);
  });

  it("a first batch below the group's offset skips what the group finished; above it, without a position of its own, it is read from the group's offset", async () => {
    const { consumer, group } = membership(async () => new Map([[`${TOPIC}:0`, 6n]]));
    group.assign('member-1', { [TOPIC]: [0] });
    assert.deepEqual((await group.aboveGroupFloor(batch(['4', '5', '6', '7']))).map((m) => m.offset), ['6', '7']);
    assert.deepEqual((await group.aboveGroupFloor(batch(['4']))).map((m) => m.offset), ['4'], 'the first batch only');
    group.assign('member-2', { [TOPIC]: [0] });
    assert.deepEqual(await group.aboveGroupFloor(batch(['9'])), []);
    assert.deepEqual(consumer.seeks, [{ topic: TOPIC, partition: 0, offset: '6' }]);
  });

  it("a position of its own above the group's offset is kept", async () => {
    const { consumer, group, read } = membership(async () => new Map([[`${TOPIC}:0`, 5n]]));
    group.assign('member-1', { [TOPIC]: [0] });
    read();
    group.assign('member-2', { [TOPIC]: [0] }); // sought to 6, its oldest unfinished record
    assert.deepEqual((await group.aboveGroupFloor(batch(['6', '7']))).map((m) => m.offset), ['6', '7']);
    assert.deepEqual(consumer.seeks, [{ topic: TOPIC, partition: 0, offset: '6' }]);
  });

  it('membership is confirmed by joining and by heartbeats, dated by when they were sent', () => {
    const { consumer, clock, group } = membership();
    group.listenForHeartbeats();
    assert.equal(group.membershipUnconfirmed(clock.now), true, 'never joined');
    group.assign('member-1', { [TOPIC]: [0] });
    assert.equal(group.membershipUnconfirmed(clock.now + 2999), false);
    clock.now += 14_000;
    consumer.heartbeatSucceeded(clock.now - 10_000);
    assert.equal(group.membershipUnconfirmed(clock.now), true, 'sent before the freeze');
    consumer.heartbeatSucceeded(clock.now);
    assert.equal(group.membershipUnconfirmed(clock.now), false);
  });

  it('a follow-up waits for membership to be confirmed, and is refused once the partition was not held without a break', async () => {
    const { clock, group } = membership();
    group.assign('member-1', { [TOPIC]: [0] });
    const since = group.heldSinceOf(`${TOPIC}:0`);
    assert.equal(await group.mayFollowUp(`${TOPIC}:0`, since), true);
    clock.now += 5000;
    const waiting = group.mayFollowUp(`${TOPIC}:0`, since);
    let answered: boolean | undefined;
    void waiting.then((may) => { answered = may; });
    await sleep(50);
    assert.equal(answered, undefined, 'membership unconfirmed: it waits');
    group.assign('member-2', { [TOPIC]: [0] });
    assert.equal(await waiting, false);
    assert.equal(group.handingOver, false);
    group.beginHandOver();
    assert.equal(group.handingOver, true);
  });
});
