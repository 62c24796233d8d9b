import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { connect, createServer, type AddressInfo } from 'node:net';
import { describe, it } from 'node:test';
import type { AvroCodec } from '@switchyard/platform/codec/avro-codec';
import type { Consumer, EachBatchPayload } from '@switchyard/platform/kafka/client';
import { CodecError, RegistryUnavailableError } from '@switchyard/platform/errors';
import { createLogger } from '@switchyard/platform/logger';
import { Registry } from '@switchyard/platform/metrics';
import type { DeliveryTask } from '@switchyard/platform/schemas/generated';
import { DeliveryConsumer } from './delivery-consumer.js';
import { deliveryMetrics } from './delivery-metrics.js';
import type { TaskRunner } from './task-runner.js';

const TOPIC = 'tasks';

/** Just the part of a kafkajs consumer DeliveryConsumer uses: the test plays kafkajs's runner. */
class FakeConsumer {
  readonly events = { GROUP_JOIN: 'consumer.group_join', HEARTBEAT: 'consumer.heartbeat', REQUEST: 'consumer.network.request' };
  readonly seeks: Array<{ topic: string; partition: number; offset: string }> = [];
  eachBatch: ((payload: EachBatchPayload) => Promise<void>) | undefined;
  private readonly listeners = new Map<string, (event: { payload: Record<string, unknown> }) => void>();
  async subscribe(): Promise<void> {}
  on(event: string, listener: (event: { payload: Record<string, unknown> }) => void): void { this.listeners.set(event, listener); }
  async run({ eachBatch }: { eachBatch: (payload: EachBatchPayload) => Promise<void> }): Promise<void> { this.eachBatch = eachBatch; }
  emit(event: string, payload: Record<string, unknown>): void { this.listeners.get(event)!({ payload }); }
  join(memberId: string, partitions: number[] | Record<string, number[]>): void {
    const memberAssignment = Array.isArray(partitions) ? { [TOPIC]: partitions } : partitions;
    this.listeners.get(this.events.GROUP_JOIN)!({ payload: { memberId, memberAssignment } });
  }
  seek(seek: { topic: string; partition: number; offset: string }): void { this.seeks.push(seek); }
  pause(): void {}
  readonly resumed: unknown[] = [];
  resume(partitions: unknown): void { this.resumed.push(partitions); }
  paused(): [] { return []; }
  readonly commits: Array<Array<{ topic: string; partition: number; offset: string }>> = [];
  async commitOffsets(offsets: Array<{ topic: string; partition: number; offset: string }>): Promise<void> { this.commits.push(offsets); }
  async stop(): Promise<void> {}
}

function deferred<T>() {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => { resolve = r; });
  return { promise, resolve };
}

/** A DeliveryConsumer over the fake consumer with a test's limits; the rest as every test has it. */
function deliveryOver(consumer: FakeConsumer, codec: AvroCodec, runner: TaskRunner, limits: { maxInFlight: number; maxInFlightPerDestination: number; maxWaitingPerDestination: number }, groupOffsets?: () => Promise<Map<string, bigint>>): DeliveryConsumer {
  return new DeliveryConsumer({
    consumer: consumer as unknown as Consumer, codec, runner, topics: [TOPIC], deliveryTopic: TOPIC, readRange: async () => [], metrics: deliveryMetrics(new Registry(), { retryTiers: 1 }),
    logger: createLogger({ service: 'test', level: 'silent' }), clock: Date.now, ...limits, commitIntervalMs: 20,
    setAside: async () => undefined, ...(groupOffsets ? { groupOffsets } : {}),
  });
}

function setup(groupOffsets: () => Promise<Map<string, bigint>>, answer: () => Promise<void> = async () => undefined) {
  const consumer = new FakeConsumer();
  const sent: string[] = [];
  const task = { taskId: 'm1:d1', destinationId: 'd1', notBefore: null } as unknown as DeliveryTask;
  const codec = { decodeKnown: () => ({ name: 'io.switchyard.pipeline.DeliveryTask', value: task }) } as unknown as AvroCodec;
  const runner = { circuitOpen: () => false, run: async (t: DeliveryTask) => { sent.push(t.taskId); await answer(); } } as unknown as TaskRunner;
  const delivery = deliveryOver(consumer, codec, runner, { maxInFlight: 10, maxInFlightPerDestination: 10, maxWaitingPerDestination: 10 }, groupOffsets);
  return { consumer, delivery, sent };
}

/** One batch of partition 0 as kafkajs hands it over, and the offsets the handler resolved. */
function batchOf(offsets: string[]) {
  const resolved: string[] = [];
  const payload = {
    batch: { topic: TOPIC, partition: 0, messages: offsets.map((offset) => ({ offset, value: Buffer.from('x') })), offsetLag: () => '0' },
    resolveOffset: (offset: string) => { resolved.push(offset); },
    heartbeat: async () => undefined,
    isRunning: () => true,
    isStale: () => false,
  } as unknown as EachBatchPayload;
  return { payload, resolved };
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

describe('DeliveryConsumer and a schema registry that does not answer', () => {
  /** A consumer whose codec must look up each record's writer schema; `lookup` answers for the registry. */
  function withLookup(lookup: () => Promise<unknown>) {
    const consumer = new FakeConsumer();
    const setAside: string[] = [];
    const sent: string[] = [];
    const codec = { decodeKnown: () => undefined, decode: lookup } as unknown as AvroCodec;
    const runner = { circuitOpen: () => false, run: async (t: DeliveryTask) => { sent.push(t.taskId); } } as unknown as TaskRunner;
    const delivery = new DeliveryConsumer({
      consumer: consumer as unknown as Consumer, codec, runner, topics: [TOPIC], deliveryTopic: TOPIC, readRange: async () => [], metrics: deliveryMetrics(new Registry(), { retryTiers: 1 }),
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

describe('DeliveryConsumer and stalled offset commits', () => {
  it('a commit unanswered for 2 s (kafkajs retrying it while a new coordinator loads) stops new tasks until it is answered', async () => {
    const consumer = new FakeConsumer();
    let unanswered: Array<() => void> | undefined = [];
    consumer.commitOffsets = async (offsets) => { consumer.commits.push(offsets); if (unanswered) await new Promise<void>((resolve) => { unanswered!.push(resolve); }); };
    const answerCommits = () => { const waiting = unanswered ?? []; unanswered = undefined; for (const answer of waiting) answer(); };
    let now = 1_000_000;
    const sent: string[] = [];
    let n = 0;
    const codec = { decodeKnown: () => ({ name: 'io.switchyard.pipeline.DeliveryTask', value: { taskId: `m${n++}:d1`, destinationId: 'd1', notBefore: null } }) } as unknown as AvroCodec;
    const runner = { circuitOpen: () => false, run: async (t: DeliveryTask) => { sent.push(t.taskId); } } as unknown as TaskRunner;
    const delivery = new DeliveryConsumer({
      consumer: consumer as unknown as Consumer, codec, runner, topics: [TOPIC], deliveryTopic: TOPIC, readRange: async () => [], metrics: deliveryMetrics(new Registry(), { retryTiers: 1 }),
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
      circuitOpen: (t: DeliveryTask) => t.destinationId === 'hung',
      defer: () => { deferred++; return new Promise<void>(() => undefined); }, // retry writes that take a while
      run: async (t: DeliveryTask) => { sent.push(t.taskId); },
    } as unknown as TaskRunner;
    const delivery = deliveryOver(consumer, codec, runner, { maxInFlight: 10, maxInFlightPerDestination: 10, maxWaitingPerDestination: 10 });
    await delivery.start();
    consumer.join('member-1', [0, 1]);
    // maxInFlight 10: ten deferrals at once, and ten healthy tasks beside them.
    const batch = (partition: number, values: string[]) => ({
      batch: { topic: TOPIC, partition, messages: values.map((v, i) => ({ offset: String(i), value: Buffer.from(v) })), offsetLag: () => '0' },
      resolveOffset: () => undefined, heartbeat: async () => undefined, isRunning: () => true, isStale: () => false,
    } as unknown as EachBatchPayload);

    await consumer.eachBatch!(batch(0, Array.from({ length: 25 }, (_, i) => `hung:${i}`)));
    assert.equal(deferred, 10, 'at most maxInFlight deferrals at once');
    assert.deepEqual(consumer.seeks.at(-1), { topic: TOPIC, partition: 0, offset: '10' }, 'the rest is read again later');

    await consumer.eachBatch!(batch(1, Array.from({ length: 5 }, (_, i) => `ok:${i}`)));
    await new Promise((r) => setImmediate(r));
    assert.equal(sent.length, 5, 'healthy tasks still get the global slots beside 10 pending deferrals');
  });
});

/**
 * Records `dest:n` (a fresh task) or `range:…` (a DeferredRange of dest `hung` over offsets 5–8 of the
 * delivery topic, in a tier; the tests' readRange gives hung:5, ok:6, hung:8).
 */
const rangeCodec = {
  decodeKnown: (value: Buffer) => {
    const [destinationId, n] = value.toString().split(':');
    if (destinationId === 'range') {
      return { name: 'io.switchyard.pipeline.DeferredRange', value: { destinationId: 'hung', topic: TOPIC, partition: 0, fromOffset: 5, toOffset: 8, tasks: 2, attempt: 1, firstAttemptAt: 1, deadline: Date.now() + 60_000, notBefore: null, lastError: 'circuit_open' } };
    }
    return { name: 'io.switchyard.pipeline.DeliveryTask', value: { taskId: `m${n}:${destinationId}`, destinationId, attempt: 0, firstAttemptAt: null, pendingUrls: null, notBefore: null } };
  },
} as unknown as AvroCodec;

describe('DeliveryConsumer deferred ranges', () => {
  const codec = rangeCodec;
  const batch = (topic: string, values: string[], first = 5) => ({
    batch: { topic, partition: 0, messages: values.map((v, i) => ({ offset: String(first + i), value: Buffer.from(v) })), offsetLag: () => '0' },
    resolveOffset: () => undefined, heartbeat: async () => undefined, isRunning: () => true, isStale: () => false,
  } as unknown as EachBatchPayload);

  it("a refusing destination's tasks of a batch become one range; the others are sent; offsets move once the range is written", async () => {
    const consumer = new FakeConsumer();
    const sent: string[] = [];
    const ranges: Array<{ destinationId: string; offsets: string[] }> = [];
    let written!: () => void;
    const runner = {
      circuitOpen: (t: DeliveryTask) => t.destinationId === 'hung',
      deferRange: (r: { destinationId: string; offsets: string[] }) => { ranges.push(r); return new Promise<void>((resolve) => { written = resolve; }); },
      run: async (t: DeliveryTask) => { sent.push(t.taskId); },
    } as unknown as TaskRunner;
    const delivery = deliveryOver(consumer, codec, runner, { maxInFlight: 10, maxInFlightPerDestination: 10, maxWaitingPerDestination: 10 });
    await delivery.start();
    consumer.join('member-1', [0]);
    await consumer.eachBatch!(batch(TOPIC, ['hung:5', 'hung:6', 'ok:7', 'hung:8']));
    await new Promise((r) => setTimeout(r, 30));
    assert.deepEqual(sent, ['m7:ok']);
    assert.deepEqual(ranges.map((r) => [r.destinationId, r.offsets]), [['hung', ['5', '6', '8']]]);
    assert.equal(consumer.commits.length, 0, 'nothing past the deferred tasks before their range is in Kafka');
    written();
    await new Promise((r) => setTimeout(r, 30));
    assert.deepEqual(consumer.commits.at(-1), [{ topic: TOPIC, partition: 0, offset: '9' }]);
  });

  /** A consumer holding delivery-topic and tier-1 partition 0 that has read one range record of tier-1 (offset 40); the range reads back hung:5, ok:6, hung:8. */
  async function rangeFellDue(runner: TaskRunner) {
    const consumer = new FakeConsumer();
    const read: Array<[number, bigint, bigint]> = [];
    const delivery = new DeliveryConsumer({
      consumer: consumer as unknown as Consumer, codec, runner, topics: [TOPIC, 'tier-1'], deliveryTopic: TOPIC, metrics: deliveryMetrics(new Registry(), { retryTiers: 1 }),
      logger: createLogger({ service: 'test', level: 'silent' }), clock: Date.now, maxInFlight: 10, maxInFlightPerDestination: 10, maxWaitingPerDestination: 10, commitIntervalMs: 20,
      setAside: async () => undefined,
      readRange: async (_topic, partition, from, to) => {
        read.push([partition, from, to]);
        return ['hung:5', 'ok:6', 'hung:8'].map((v, i) => ({ offset: String([5, 6, 8][i]), key: Buffer.from(`${v.split(':')[0]}:u`), value: Buffer.from(v) }));
      },
    });
    await delivery.start();
    consumer.join('member-1', { [TOPIC]: [0], 'tier-1': [0] });
    await consumer.eachBatch!(batch('tier-1', ['range:x'], 40));
    await new Promise((r) => setTimeout(r, 30));
    return { consumer, read };
  }

  it('a range that fell due is deferred again while its destination refuses, else read back and its tasks run with its attempt count', async () => {
    for (const refusing of [true, false]) {
      const sent: DeliveryTask[] = [];
      let again = 0;
      const runner = {
        circuitOpen: () => false,
        destinationRefuses: () => refusing,
        deferRangeAgain: async () => { again++; return true; },
        run: async (t: DeliveryTask) => { sent.push(t); },
      } as unknown as TaskRunner;
      const { consumer, read } = await rangeFellDue(runner);
      if (refusing) {
        assert.deepEqual([again, read.length, sent.length], [1, 0, 0], 'deferred again, unread');
      } else {
        assert.deepEqual(read, [[0, 5n, 8n]]);
        assert.deepEqual(sent.map((t) => [t.taskId, t.attempt, t.firstAttemptAt]), [['m5:hung', 1, 1], ['m8:hung', 1, 1]], "the destination's tasks only");
      }
      assert.deepEqual(consumer.commits.at(-1), [{ topic: 'tier-1', partition: 0, offset: '41' }]);
    }
  });

  it('past its deadline, a range whose destination refuses is dead-lettered task by task without a request', async () => {
    const sent: string[] = [];
    const deferred: Array<[string, string, number]> = [];
    const runner = {
      circuitOpen: () => false,
      destinationRefuses: () => true,
      deferRangeAgain: async () => false, // no time left: the policy says dead letter
      defer: async (t: DeliveryTask, reason: string) => { deferred.push([t.taskId, reason, t.attempt]); },
      run: async (t: DeliveryTask) => { sent.push(t.taskId); },
    } as unknown as TaskRunner;
    const { consumer } = await rangeFellDue(runner);
    assert.deepEqual(sent, []);
    assert.deepEqual(deferred, [['m5:hung', 'circuit_open', 1], ['m8:hung', 'circuit_open', 1]], 'each with the range\'s attempt count, for defer() to dead-letter');
    assert.deepEqual(consumer.commits.at(-1), [{ topic: 'tier-1', partition: 0, offset: '41' }]);
  });
});

describe('DeliveryConsumer: a range run and its hold on the tier partition', () => {
  const codec = rangeCodec;
  const TIER = 'tier-1';

  /** One global slot, so the range's second task waits for the first; each request answers when the test says. */
  async function rangeRunning() {
    const consumer = new FakeConsumer();
    const sent: string[] = [];
    const answers: Array<() => void> = [];
    const rests: Array<[string, { fromOffset: number; tasks: number }]> = [];
    const runner = {
      circuitOpen: () => false,
      destinationRefuses: () => false,
      run: (t: DeliveryTask) => { sent.push(t.taskId); return new Promise<void>((resolve) => { answers.push(resolve); }); },
      deferRangeRest: async (topic: string, rest: { fromOffset: number; tasks: number }) => { rests.push([topic, { fromOffset: rest.fromOffset, tasks: rest.tasks }]); },
    } as unknown as TaskRunner;
    const delivery = new DeliveryConsumer({
      consumer: consumer as unknown as Consumer, codec, runner, topics: [TOPIC, TIER], deliveryTopic: TOPIC, metrics: deliveryMetrics(new Registry(), { retryTiers: 1 }),
      logger: createLogger({ service: 'test', level: 'silent' }), clock: Date.now, maxInFlight: 1, maxInFlightPerDestination: 10, maxWaitingPerDestination: 10, commitIntervalMs: 20,
      setAside: async () => undefined,
      readRange: async () => ['hung:5', 'ok:6', 'hung:8'].map((v, i) => ({ offset: String([5, 6, 8][i]), key: Buffer.from(`${v.split(':')[0]}:u`), value: Buffer.from(v) })),
    });
    await delivery.start();
    consumer.join('member-1', { [TIER]: [0] });
    await consumer.eachBatch!({
      batch: { topic: TIER, partition: 0, messages: [{ offset: '40', value: Buffer.from('range:x') }], offsetLag: () => '0' },
      resolveOffset: () => undefined, heartbeat: async () => undefined, isRunning: () => true, isStale: () => false,
    } as unknown as EachBatchPayload);
    await new Promise((r) => setTimeout(r, 20));
    assert.deepEqual(sent, ['m5:hung'], 'the second task waits for the one slot');
    const answer = async () => { answers.shift()!(); await new Promise((r) => setTimeout(r, 60)); };
    return { consumer, delivery, sent, rests, answer };
  }
  const committedRange = (consumer: FakeConsumer) => consumer.commits.some((list) => list.some((c) => c.topic === TIER && c.offset === '41'));

  it('the group rebalances and the tier partition goes to another member: the run stops, the range record stays uncommitted for its next owner', async () => {
    const { consumer, delivery, sent, answer } = await rangeRunning();
    const handOver = delivery.handOver(30);
    await answer();
    assert.deepEqual(sent, ['m5:hung'], 'nothing new while the group rebalances');
    await handOver;
    consumer.join('member-1', { [TIER]: [1] });
    await new Promise((r) => setTimeout(r, 60));
    assert.deepEqual(sent, ['m5:hung'], 'the next owner runs the range');
    assert.equal(committedRange(consumer), false);
  });

  it('the group rebalances and this member keeps the tier partition: the run goes on and the range is committed', async () => {
    const { consumer, delivery, sent, answer } = await rangeRunning();
    const handOver = delivery.handOver(30);
    await answer();
    await handOver;
    consumer.join('member-1', { [TIER]: [0] });
    await new Promise((r) => setTimeout(r, 60));
    assert.deepEqual(sent, ['m5:hung', 'm8:hung']);
    await answer();
    assert.equal(committedRange(consumer), true);
  });

  it('shutdown cuts the run short: what is left is written back to the tier and the range record is committed', async () => {
    const { consumer, delivery, sent, rests, answer } = await rangeRunning();
    const stopped = delivery.stop(1000);
    await answer();
    await stopped;
    assert.deepEqual(sent, ['m5:hung']);
    assert.deepEqual(rests, [[TIER, { fromOffset: 8, tasks: 1 }]]);
    assert.equal(committedRange(consumer), true);
  });
});

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

describe('DeliveryConsumer: a range fan-out held (tasks built from the ingest records)', () => {
  const TIER = 'tier-1';
  const INGEST = 'ingest';
  const event = (n: number) => ({
    messageId: `m${n}`, sourceId: 'src', userId: `u${n}`, anonymousId: null, timestamp: 1_700_000_000_000, originalTimestamp: 1_700_000_000_000, sentAt: null,
    receivedAt: 1_700_000_000_100 + n, context: null, integrations: null, event: 'Order Completed', properties: '{"total":1}',
  });
  /** Lookups of `flaky:n` records: the first one finds the registry not answering. */
  let lookups = 0;
  /** `held`: a range of dest `hung` held by fan-out over ingest offsets 5–9, naming 5, 7 and 9; `e:n` (and `flaky:n`): an ingest Track event. */
  const codec = {
    decodeKnown: (value: Buffer) => {
      const [kind, n] = value.toString().split(':');
      if (kind === 'bad') throw new Error('unknown schema id 99');
      if (kind === 'flaky' && lookups++ === 0) throw new RegistryUnavailableError('schema id 11 could not be looked up: connect ECONNREFUSED');
      if (kind === 'held') {
        return { name: 'io.switchyard.pipeline.DeferredRange', value: { destinationId: 'hung', topic: INGEST, partition: 2, fromOffset: 5, toOffset: 9, tasks: 3, attempt: 1, firstAttemptAt: 1234, deadline: Date.now() + 60_000, notBefore: null, lastError: 'circuit_open', heldOffsets: [5, 7, 9] } };
      }
      return { name: 'io.switchyard.event.Track', value: event(Number(n)) };
    },
  } as unknown as AvroCodec;

  async function heldRangeFellDue(runner: TaskRunner, values = [5, 6, 7, 8, 9].map((n) => `e:${n}`)) {
    const consumer = new FakeConsumer();
    const read: Array<[string, number, bigint, bigint]> = [];
    const setAside: Array<[string, number, string, string]> = [];
    const delivery = new DeliveryConsumer({
      consumer: consumer as unknown as Consumer, codec, runner, topics: [TOPIC, TIER], deliveryTopic: TOPIC, metrics: deliveryMetrics(new Registry(), { retryTiers: 1 }),
      logger: createLogger({ service: 'test', level: 'silent' }), clock: Date.now, maxInFlight: 10, maxInFlightPerDestination: 10, maxWaitingPerDestination: 10, commitIntervalMs: 20,
      setAside: async (_value, topic, partition, offset, reason) => { setAside.push([topic, partition, offset, reason]); },
      readRange: async (topic, partition, from, to) => {
        read.push([topic, partition, from, to]);
        return values.map((v, i) => ({ offset: String(5 + i), key: Buffer.from(`src:u${5 + i}`), value: Buffer.from(v) }));
      },
    });
    await delivery.start();
    consumer.join('member-1', { [TIER]: [0] });
    await consumer.eachBatch!({
      batch: { topic: TIER, partition: 0, messages: [{ offset: '40', value: Buffer.from('held') }], offsetLag: () => '0' },
      resolveOffset: () => undefined, heartbeat: async () => undefined, isRunning: () => true, isStale: () => false,
    } as unknown as EachBatchPayload);
    await new Promise((r) => setTimeout(r, 30));
    return { consumer, read, setAside };
  }

  it('read from the ingest topic: the held events only, as the tasks fan-out would have written, with the range\'s attempt count', async () => {
    const sent: DeliveryTask[] = [];
    const runner = { circuitOpen: () => false, destinationRefuses: () => false, run: async (t: DeliveryTask) => { sent.push(t); } } as unknown as TaskRunner;
    const { consumer, read } = await heldRangeFellDue(runner);
    assert.deepEqual(read, [[INGEST, 2, 5n, 9n]]);
    assert.deepEqual(sent.map((t) => [t.taskId, t.destinationId, t.userKey, t.attempt, t.firstAttemptAt, t.createdAt, t.receivedAt]), [
      ['m5:hung', 'hung', 'u5', 1, 1234, 1234, 1_700_000_000_105], ['m7:hung', 'hung', 'u7', 1, 1234, 1234, 1_700_000_000_107], ['m9:hung', 'hung', 'u9', 1, 1234, 1234, 1_700_000_000_109],
    ]);
    assert.match(sent[0]!.body, /^\{"version":1,"type":"track","messageId":"m5","userId":"u5","event":"Order Completed"/);
    assert.deepEqual(consumer.commits.at(-1), [{ topic: TIER, partition: 0, offset: '41' }]);
  });

  it('refused part-way: the rest is deferred again naming only the held offsets left', async () => {
    const again: Array<{ fromOffset: number; tasks: number; heldOffsets: number[] | null }> = [];
    let calls = 0;
    const runner = {
      circuitOpen: () => false,
      destinationRefuses: () => ++calls > 2, // the range's check and the first task's pass; the second task's is refused
      deferRangeAgain: async (r: { fromOffset: number; tasks: number; heldOffsets: number[] | null }) => { again.push(r); return true; },
      run: async () => undefined,
    } as unknown as TaskRunner;
    await heldRangeFellDue(runner);
    assert.deepEqual(again.map((r) => [r.fromOffset, r.tasks, r.heldOffsets]), [[7, 2, [7, 9]]]);
  });

  it('a held event that cannot be decoded is set aside on invalid-events, not dropped; the others run', async () => {
    const sent: string[] = [];
    const runner = { circuitOpen: () => false, destinationRefuses: () => false, run: async (t: DeliveryTask) => { sent.push(t.taskId); } } as unknown as TaskRunner;
    const { consumer, setAside } = await heldRangeFellDue(runner, ['e:5', 'e:6', 'bad', 'e:8', 'e:9']);
    assert.deepEqual(sent, ['m5:hung', 'm9:hung']);
    assert.deepEqual(setAside, [[INGEST, 2, '7', 'held for hung: unknown schema id 99']]);
    assert.deepEqual(consumer.commits.at(-1), [{ topic: TIER, partition: 0, offset: '41' }]);
  });

  it('a held event whose schema the registry does not answer for (restarting) waits for it: made a task, not set aside', async () => {
    const sent: string[] = [];
    const runner = { circuitOpen: () => false, destinationRefuses: () => false, run: async (t: DeliveryTask) => { sent.push(t.taskId); } } as unknown as TaskRunner;
    lookups = 0;
    const { consumer, setAside } = await heldRangeFellDue(runner, ['e:5', 'e:6', 'flaky:7', 'e:8', 'e:9']);
    for (let waited = 0; sent.length < 3 && waited < 5000; waited += 50) await new Promise((r) => setTimeout(r, 50));
    assert.deepEqual(sent, ['m5:hung', 'm7:hung', 'm9:hung']);
    assert.deepEqual(setAside, []);
    assert.equal(lookups, 2, 'looked up again after the registry did not answer');
    await new Promise((r) => setTimeout(r, 50));
    assert.deepEqual(consumer.commits.at(-1), [{ topic: TIER, partition: 0, offset: '41' }]);
  });
});
