// When the consumer runner commits acknowledged offsets (commit-scheduler.ts), against a fake client.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createLogger } from '../logger.js';
import { CommitScheduler } from './commit-scheduler.js';
import type { TopicPartitionOffset } from './consumer-client.js';
import { PartitionOffsets } from './offset-tracker.js';
import { FakeConsumerClient } from './test-support/fake-consumer-client.js';

const TOPIC = 'tasks';
const logger = createLogger({ service: 'test', level: 'silent' });

describe('CommitScheduler', () => {
  /** A scheduler over the fake consumer with a clock the test moves; partition 0 has offsets 5 and 6 in flight. */
  function scheduler(commitIntervalMs = 100) {
    const consumer = new FakeConsumerClient();
    const offsets = new PartitionOffsets();
    const tracker = offsets.tracker(TOPIC, 0);
    tracker.track('5');
    tracker.track('6');
    const clock = { now: 1_000_000 };
    let stopping = false;
    const commits = new CommitScheduler({ consumer, offsets, commitIntervalMs, logger, clock: () => clock.now, stopping: () => stopping });
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
    consumer.onCommit = async () => { await new Promise<void>((r) => { answer = r; }); };
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
    const succeeded: Array<readonly TopicPartitionOffset[]> = [];
    consumer.onCommit = async (offsets) => { if (failing) throw new Error('NOT_COORDINATOR'); succeeded.push(offsets); };
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
    assert.deepEqual(succeeded, [[{ topic: TOPIC, partition: 0, offset: '6' }]]);
    assert.equal(commits.commitsStalled(clock.now + 5000), false);
  });

  it('a commit unanswered for 2 s stalls sending', async () => {
    const { consumer, tracker, clock, commits } = scheduler(0);
    let answer!: () => void;
    consumer.onCommit = async () => { await new Promise<void>((r) => { answer = r; }); };
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
