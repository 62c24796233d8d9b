import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { AvroCodec } from '@switchyard/platform/codec/avro-codec';
import type { Consumer } from '@switchyard/platform/kafka/client';
import { createLogger } from '@switchyard/platform/logger';
import { Registry } from '@switchyard/platform/metrics';
import type { DeliveryTask } from '@switchyard/platform/schemas/generated';
import { CommitScheduler } from '@switchyard/platform/consuming/commit-scheduler';
import { DeliveryConsumer } from './delivery-consumer.js';
import { deliveryMetrics } from './delivery-metrics.js';
import { PartitionOffsets } from '@switchyard/platform/consuming/offset-tracker';
import { asConsumer, batchOf, FakeConsumer, silentLogger, TOPIC } from './test-support/fake-consumer.js';
import type { TaskRunner } from './task-runner.js';

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
    const runner = { rateLimitOf: () => undefined, circuitOpen: () => false, run: async (t: DeliveryTask) => { sent.push(t.taskId); } } as unknown as TaskRunner;
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

describe('CommitScheduler', () => {
  /** A scheduler over the fake consumer with a clock the test moves; partition 0 has offsets 5 and 6 in flight. */
  function scheduler(commitIntervalMs = 100) {
    const consumer = new FakeConsumer();
    const offsets = new PartitionOffsets();
    const tracker = offsets.tracker(TOPIC, 0);
    tracker.track('5');
    tracker.track('6');
    const clock = { now: 1_000_000 };
    let stopping = false;
    const commits = new CommitScheduler({ consumer: { commit: (list) => asConsumer(consumer).commitOffsets([...list]) }, offsets, commitIntervalMs, logger: silentLogger(), clock: () => clock.now, stopping: () => stopping });
    return { consumer, tracker, clock, commits, stop: () => { stopping = true; } };
  }
  const settle = () => new Promise((r) => setImmediate(r));

  it('commits only below the oldest unfinished task, and nothing while nothing moved', async () => {
    const { consumer, tracker, commits } = scheduler();
    commits.requestCommit();
    await settle();
    assert.deepEqual(consumer.commits, [], 'offset 5 unfinished: nothing to commit');
    tracker.complete('6');
    await commits.commit();
    assert.deepEqual(consumer.commits, [], 'offset 6 finished before 5: still nothing');
    tracker.complete('5');
    await commits.commit();
    assert.deepEqual(consumer.commits, [[{ topic: TOPIC, partition: 0, offset: '7' }]]);
    await commits.commit();
    assert.equal(consumer.commits.length, 1, 'the same offset is not committed twice');
  });

  it('at once when none ran within the interval; otherwise once the interval ends', async () => {
    const { consumer, tracker, commits } = scheduler(50);
    tracker.complete('5');
    commits.requestCommit();
    await settle();
    assert.deepEqual(consumer.commits, [[{ topic: TOPIC, partition: 0, offset: '6' }]]);
    tracker.complete('6');
    commits.requestCommit();
    commits.requestCommit();
    await settle();
    assert.equal(consumer.commits.length, 1, 'within the interval: waits');
    await new Promise((r) => setTimeout(r, 150));
    assert.deepEqual(consumer.commits.at(-1), [{ topic: TOPIC, partition: 0, offset: '7' }]);
    assert.equal(consumer.commits.length, 2, 'two requests, one commit');
  });

  it('one commit in flight at a time: what finishes meanwhile is committed after it is answered', async () => {
    const { consumer, tracker, clock, commits } = scheduler(0);
    let answer!: () => void;
    consumer.commitOffsets = async (offsets) => { consumer.commits.push(offsets); await new Promise<void>((r) => { answer = r; }); };
    tracker.complete('5');
    commits.requestCommit();
    await settle();
    tracker.complete('6');
    clock.now += 10;
    commits.requestCommit();
    await settle();
    assert.equal(consumer.commits.length, 1);
    assert.ok(commits.inFlight);
    answer();
    await settle();
    await settle();
    assert.deepEqual(consumer.commits.at(-1), [{ topic: TOPIC, partition: 0, offset: '7' }]);
    answer();
  });

  it('commits failing for 2 s stall sending; a new generation, or the next success, ends the stall', async () => {
    const { consumer, tracker, clock, commits } = scheduler(10);
    let failing = true;
    consumer.commitOffsets = async (offsets) => { if (failing) throw new Error('NOT_COORDINATOR'); consumer.commits.push(offsets); };
    tracker.complete('5');
    commits.requestCommit();
    await settle();
    assert.equal(commits.commitsStalled(clock.now + 1999), false);
    assert.equal(commits.commitsStalled(clock.now + 2000), true, 'failing since the first failure');
    commits.newGeneration();
    assert.equal(commits.commitsStalled(clock.now + 2000), false, 'a new generation has not failed yet');
    await new Promise((r) => setTimeout(r, 25));
    assert.equal(commits.commitsStalled(clock.now + 2000), true, 'asked for again an interval later, and failed again');
    failing = false;
    await new Promise((r) => setTimeout(r, 40));
    assert.deepEqual(consumer.commits, [[{ topic: TOPIC, partition: 0, offset: '6' }]]);
    assert.equal(commits.commitsStalled(clock.now + 5000), false);
  });

  it('a commit unanswered for 2 s stalls sending', async () => {
    const { consumer, tracker, clock, commits } = scheduler(0);
    let answer!: () => void;
    consumer.commitOffsets = async () => { await new Promise<void>((r) => { answer = r; }); };
    tracker.complete('5');
    commits.requestCommit();
    await settle();
    assert.equal(commits.commitsStalled(clock.now + 1999), false);
    assert.equal(commits.commitsStalled(clock.now + 2000), true);
    answer();
    await settle();
    await settle();
    assert.equal(commits.commitsStalled(clock.now + 2000), false);
  });

  it('nothing is scheduled once shutdown began, and a scheduled commit can be dropped', async () => {
    const { consumer, tracker, commits, stop } = scheduler(50);
    tracker.complete('5');
    commits.requestCommit();
    await settle();
    tracker.complete('6');
    commits.requestCommit(); // waits for the interval
    commits.cancelScheduled();
    await new Promise((r) => setTimeout(r, 80));
    assert.equal(consumer.commits.length, 1, 'the scheduled commit was dropped');
    stop();
    commits.requestCommit();
    await new Promise((r) => setTimeout(r, 80));
    assert.equal(consumer.commits.length, 1, 'stop() makes the final commit itself');
  });
});
