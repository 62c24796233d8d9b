import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { AvroCodec } from '@switchyard/platform/codec/avro-codec';
import { createLogger } from '@switchyard/platform/logger';
import { Registry } from '@switchyard/platform/metrics';
import type { DeliveryTask } from '@switchyard/platform/schemas/generated';
import { DeliveryConsumer } from './delivery-consumer.js';
import { deliveryMetrics } from './delivery-metrics.js';
import { GroupAssignment } from './assignment.js';
import { CommitScheduler } from '@switchyard/platform/consuming/commit-scheduler';
import type { PendingRange } from './deferred-ranges.js';
import { PartitionOffsets } from '@switchyard/platform/consuming/offset-tracker';
import { PauseControl } from './pause-control.js';
import { RangeReplay } from './range-replay.js';
import { RateLimits } from './rate-limits.js';
import { RangeTasks } from './range-tasks.js';
import { StallDetector } from './stall-detector.js';
import { TaskSlots } from './task-slots.js';
import { deliveryOver, FakeConsumer, silentLogger, testMetrics, recordsOf, TOPIC } from './test-support/fake-consumer.js';
import type { TaskRunner } from './task-runner.js';

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
  const batch = (topic: string, values: string[], first = 5) => recordsOf(topic, 0, values.map((v, i) => ({ offset: String(first + i), value: Buffer.from(v) })));

  it("a refusing destination's tasks of a batch become one range; the others are sent; offsets move once the range is written", async () => {
    const consumer = new FakeConsumer();
    const sent: string[] = [];
    const ranges: Array<{ destinationId: string; offsets: string[] }> = [];
    let written!: () => void;
    const runner = {
      rateLimitOf: () => undefined, underLimit: () => undefined, circuitOpen: (t: DeliveryTask) => t.destinationId === 'hung',
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
  async function rangeFellDue(runner: TaskRunner, holdMs?: number, rangeRecords = ['range:x']) {
    const consumer = new FakeConsumer();
    const read: Array<[number, bigint, bigint]> = [];
    const delivery = new DeliveryConsumer({
      client: consumer, codec, runner, topics: [TOPIC, 'tier-1'], deliveryTopic: TOPIC, metrics: deliveryMetrics(new Registry(), { retryTiers: 1 }),
      logger: createLogger({ service: 'test', level: 'silent' }), clock: Date.now, maxInFlight: 10, maxInFlightPerDestination: 10, maxWaitingPerDestination: 10, commitIntervalMs: 20,
      setAside: async () => undefined, ...(holdMs === undefined ? {} : { holdMs }),
      readRange: async (_topic, partition, from, to) => {
        read.push([partition, from, to]);
        return ['hung:5', 'ok:6', 'hung:8'].map((v, i) => ({ offset: String([5, 6, 8][i]), key: Buffer.from(`${v.split(':')[0]}:u`), value: Buffer.from(v) }));
      },
    });
    await delivery.start();
    consumer.join('member-1', { [TOPIC]: [0], 'tier-1': [0] });
    await consumer.eachBatch!(batch('tier-1', rangeRecords, 40));
    await new Promise((r) => setTimeout(r, 30));
    return { consumer, read };
  }

  it('a range that fell due is deferred again while its destination refuses, else read back and its tasks run with its attempt count', async () => {
    for (const refusing of [true, false]) {
      const sent: DeliveryTask[] = [];
      let again = 0;
      const runner = {
        rateLimitOf: () => undefined, underLimit: () => undefined, circuitOpen: () => false,
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

  it('a rate-limited range run to its end with a token to spare tells fan-out it may write the tasks again; one held again part-way does not', async () => {
    for (const [perSecond, holdMs] of [[1000, 10_000], [1, 500]] as const) {
      const sent: string[] = [];
      const underLimit: string[] = [];
      const heldAgain: number[] = [];
      const runner = {
        rateLimitOf: () => perSecond, underLimit: (id: string) => { underLimit.push(id); }, circuitOpen: () => false, destinationRefuses: () => false,
        holdRangeAgain: async (rest: { tasks: number }) => { heldAgain.push(rest.tasks); },
        run: async (t: DeliveryTask) => { sent.push(t.taskId); },
      } as unknown as TaskRunner;
      const { consumer } = await rangeFellDue(runner, holdMs);
      if (perSecond === 1000) assert.deepEqual([sent, heldAgain, underLimit], [['m5:hung', 'm8:hung'], [], ['hung']]);
      else assert.deepEqual([sent, heldAgain, underLimit], [['m5:hung'], [1], []], 'one token, the next beyond the hold: the rest held again');
      assert.deepEqual(consumer.commits.at(-1), [{ topic: 'tier-1', partition: 0, offset: '41' }]);
    }
  });

  it('rate-limited ranges falling due together divide the tokens: one without any is held again unread', async () => {
    const sent: string[] = [];
    const heldAgain: number[] = [];
    const runner = {
      rateLimitOf: () => 10, underLimit: () => undefined, circuitOpen: () => false, destinationRefuses: () => false,
      holdRangeAgain: async (rest: { tasks: number }) => { heldAgain.push(rest.tasks); },
      run: async (t: DeliveryTask) => { sent.push(t.taskId); },
    } as unknown as TaskRunner;
    // 10/s with a burst of 1: the first range's two tokens come at 0 and 100 ms, the next at 200 ms is past the 150 ms hold.
    const { consumer, read } = await rangeFellDue(runner, 150, ['range:x', 'range:y']);
    await new Promise((r) => setTimeout(r, 150));
    assert.deepEqual([read.length, heldAgain], [1, [2]], 'the second range is not read');
    assert.deepEqual(sent, ['m5:hung', 'm8:hung']);
    assert.deepEqual(consumer.commits.at(-1), [{ topic: 'tier-1', partition: 0, offset: '42' }]);
  });

  it('past its deadline, a range whose destination refuses is dead-lettered task by task without a request', async () => {
    const sent: string[] = [];
    const deferred: Array<[string, string, number]> = [];
    const runner = {
      rateLimitOf: () => undefined, underLimit: () => undefined, circuitOpen: () => false,
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
      rateLimitOf: () => undefined, underLimit: () => undefined, circuitOpen: () => false,
      destinationRefuses: () => false,
      run: (t: DeliveryTask) => { sent.push(t.taskId); return new Promise<void>((resolve) => { answers.push(resolve); }); },
      deferRangeRest: async (topic: string, rest: { fromOffset: number; tasks: number }) => { rests.push([topic, { fromOffset: rest.fromOffset, tasks: rest.tasks }]); },
    } as unknown as TaskRunner;
    const delivery = new DeliveryConsumer({
      client: consumer, codec, runner, topics: [TOPIC, TIER], deliveryTopic: TOPIC, metrics: deliveryMetrics(new Registry(), { retryTiers: 1 }),
      logger: createLogger({ service: 'test', level: 'silent' }), clock: Date.now, maxInFlight: 1, maxInFlightPerDestination: 10, maxWaitingPerDestination: 10, commitIntervalMs: 20, handOverMs: 30,
      setAside: async () => undefined,
      readRange: async () => ['hung:5', 'ok:6', 'hung:8'].map((v, i) => ({ offset: String([5, 6, 8][i]), key: Buffer.from(`${v.split(':')[0]}:u`), value: Buffer.from(v) })),
    });
    await delivery.start();
    consumer.join('member-1', { [TIER]: [0] });
    await consumer.eachBatch!(recordsOf(TIER, 0, [{ offset: '40', value: Buffer.from('range:x') }]));
    await new Promise((r) => setTimeout(r, 20));
    assert.deepEqual(sent, ['m5:hung'], 'the second task waits for the one slot');
    const answer = async () => { answers.shift()!(); await new Promise((r) => setTimeout(r, 60)); };
    return { consumer, delivery, sent, rests, answer };
  }
  const committedRange = (consumer: FakeConsumer) => consumer.commits.some((list) => list.some((c) => c.topic === TIER && c.offset === '41'));

  it('the group rebalances and the tier partition goes to another member: the run stops, the range record stays uncommitted for its next owner', async () => {
    const { consumer, delivery, sent, answer } = await rangeRunning();
    const handOver = consumer.rebalance();
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
    const handOver = consumer.rebalance();
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

describe('RangeReplay', () => {
  /** RangeReplay wired to the pieces DeliveryConsumer gives it, over the fake consumer; two deferral slots. */
  function replayOver(runner: TaskRunner) {
    const consumer = new FakeConsumer();
    const logger = silentLogger();
    const metrics = testMetrics();
    const offsets = new PartitionOffsets();
    const stopping = () => false;
    const slots = new TaskSlots({ maxInFlight: 2, maxInFlightPerDestination: 10, maxWaitingPerDestination: 10, stopping });
    const stalls = new StallDetector();
    const pauses = new PauseControl({ consumer, metrics, clock: Date.now, stalls, perDestination: slots.perDestination, maxWaitingPerDestination: 10, stopping });
    const commits = new CommitScheduler({ consumer, offsets, commitIntervalMs: 0, logger, clock: Date.now, stopping });
    const group = new GroupAssignment({ consumer, offsets, logger, clock: Date.now, stopping });
    group.assign('member-1', { [TOPIC]: [0, 1], 'tier-1': [0] });
    const rangeTasks = new RangeTasks({ codec: rangeCodec, logger, setAside: async () => undefined, registryUnavailable: () => undefined, stopping });
    const runInSlots = async (task: DeliveryTask) => { await runner.run(task); slots.finished(); return true; };
    const replay = new RangeReplay({ runner, readRange: async () => [], metrics, logger, clock: Date.now, slots, pauses, commits, group, stalls, rangeTasks, rates: new RateLimits({ clock: Date.now }), holdMs: 10_000, runInSlots, stopping });
    const tracker = offsets.tracker(TOPIC, 0);
    for (const offset of ['5', '6']) tracker.track(offset);
    /** What handleBatch does before it hands a deferral over. */
    const admit = () => { assert.ok(slots.deferrals.tryAcquire()); slots.taskStarted(); };
    return { consumer, slots, pauses, replay, tracker, admit };
  }
  const task = { taskId: 'm5:hung', destinationId: 'hung' } as unknown as DeliveryTask;
  const settle = () => new Promise((r) => setTimeout(r, 10));

  it('a deferred task finishes its offset once written; partitions waiting for deferral slots are read again once half are free', async () => {
    const { consumer, slots, pauses, replay, tracker, admit } = replayOver({ defer: async () => undefined } as unknown as TaskRunner);
    admit();
    admit();
    pauses.waitForDeferrals(TOPIC, 1, '3');
    await replay.deferTask(task, 'circuit_open', tracker, '5');
    await settle();
    assert.deepEqual(consumer.resumed, [[{ topic: TOPIC, partitions: [1] }]]);
    assert.deepEqual(consumer.commits, [[{ topic: TOPIC, partition: 0, offset: '6' }]]);
    assert.deepEqual([slots.deferrals.active, slots.unfinished], [1, 1]);
  });

  it('a deferral that failed leaves its offset unfinished, and gives its slot back', async () => {
    const { consumer, slots, replay, tracker, admit } = replayOver({ defer: async () => { throw new Error('shutting down'); } } as unknown as TaskRunner);
    admit();
    await replay.deferTask(task, 'overloaded', tracker, '5');
    await settle();
    assert.deepEqual(consumer.commits, []);
    assert.deepEqual([slots.deferrals.active, slots.unfinished], [0, 0]);
  });

  it("a range's tasks' offsets finish once its record is in Kafka, not before", async () => {
    let written!: () => void;
    const { consumer, slots, replay, tracker } = replayOver({ deferRange: () => new Promise<void>((r) => { written = r; }) } as unknown as TaskRunner);
    replay.writeRange({ destinationId: 'hung', tasks: [task, task], offsets: ['5', '6'] } as unknown as PendingRange, tracker);
    await settle();
    assert.deepEqual([consumer.commits, slots.unfinished], [[], 1]);
    written();
    await settle();
    assert.deepEqual([consumer.commits, slots.unfinished], [[[{ topic: TOPIC, partition: 0, offset: '7' }]], 0]);
  });

  it('a range that fell due while its destination refuses is deferred again unread, and its tier offset finishes', async () => {
    const again: string[] = [];
    const { slots, replay, admit } = replayOver({ destinationRefuses: () => true, deferRangeAgain: async (_r: unknown, reason: string) => { again.push(reason); return true; } } as unknown as TaskRunner);
    const tierTracker = new PartitionOffsets().tracker('tier-1', 0);
    tierTracker.track('40');
    admit();
    const range = { destinationId: 'hung', topic: TOPIC, partition: 0, fromOffset: 5, toOffset: 8, tasks: 2, attempt: 1, firstAttemptAt: 1, deadline: Date.now() + 60_000, notBefore: null, lastError: 'circuit_open', heldOffsets: null };
    await replay.releaseRange(range, 'tier-1', 0, tierTracker, '40');
    assert.deepEqual(again, ['circuit_open']);
    assert.equal(tierTracker.committable(), '41');
    assert.deepEqual([slots.deferrals.active, slots.unfinished], [0, 0]);
  });
});
