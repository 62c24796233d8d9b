// The consumer runner's contract, against a fake client (no broker): what it commits in each mode,
// when, and what a rebalance and a stop do.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createLogger } from '../logger.js';
import { ConsumerRunner, type Ack, type Assignment, type ConsumerRunnerOptions } from './consumer-runner.js';
import { FakeConsumerClient } from './test-support/fake-consumer-client.js';

const logger = createLogger({ service: 'test', level: 'silent' });
const TOPIC = 'tasks';
const settle = () => new Promise((resolve) => setTimeout(resolve, 5));

function runnerOver(client: FakeConsumerClient, opts: Partial<ConsumerRunnerOptions> = {}): ConsumerRunner {
  return new ConsumerRunner({ client, topics: [TOPIC], from: 'earliest', commits: 'acknowledged', commitIntervalMs: 0, logger, ...opts });
}

describe('ConsumerRunner: starting', () => {
  it('connects, subscribes from where it was told and runs the client', async () => {
    const client = new FakeConsumerClient();
    await runnerOver(client, { from: 'latest', partitionsAtOnce: 8 }).start(async () => undefined);
    assert.equal(client.connected, true);
    assert.deepEqual(client.subscribed, { topics: [TOPIC], from: 'latest' });
    assert.equal(client.run_?.partitionsAtOnce, 8);
  });

  it('a runner that commits acknowledged records resolves only what the handler took; the others resolve whole batches', async () => {
    for (const [commits, whole] of [['acknowledged', false], ['transactional', true], ['none', true]] as const) {
      const client = new FakeConsumerClient();
      await runnerOver(client, { commits }).start(async () => undefined);
      assert.equal(client.run_?.resolveWholeBatch, whole, commits);
    }
  });
});

describe('ConsumerRunner: acknowledged records', () => {
  it('commits each partition up to just before its oldest unacknowledged record, acknowledgements in any order', async () => {
    const client = new FakeConsumerClient();
    const acks = new Map<string, Ack>();
    const runner = runnerOver(client);
    await runner.start(async (batch, ctx) => { for (const m of batch.messages) acks.set(`${batch.partition}:${m.offset}`, ctx.take(m.offset)); });
    client.assign('m1', { [TOPIC]: [0, 1] });
    await client.deliver(TOPIC, 0, ['10', '11', '12']);
    await client.deliver(TOPIC, 1, ['5']);
    acks.get('0:11')!();
    await settle();
    assert.equal(client.commits.length, 0, 'offset 10 is unfinished: nothing of partition 0 may be committed');
    acks.get('0:10')!();
    await settle();
    assert.deepEqual(client.commits.at(-1), [{ topic: TOPIC, partition: 0, offset: '12' }]);
    acks.get('1:5')!();
    acks.get('0:12')!();
    await settle();
    const last = new Map(client.commits.flat().map((c) => [c.partition, c.offset]));
    assert.deepEqual([...last].sort(), [[0, '13'], [1, '6']]);
    assert.equal(runner.unacknowledged, 0);
  });

  it('an acknowledgement given twice, or after the partition was taken away, commits nothing', async () => {
    const client = new FakeConsumerClient();
    let ack: Ack | undefined;
    const runner = runnerOver(client);
    await runner.start(async (batch, ctx) => { ack = ctx.take(batch.messages[0]!.offset); });
    client.assign('m1', { [TOPIC]: [0] });
    await client.deliver(TOPIC, 0, ['3']);
    client.assign('m1', { [TOPIC]: [1] });
    ack!();
    ack!();
    await settle();
    assert.deepEqual(client.commits, []);
  });

  it('offsets must be taken in increasing order', async () => {
    const client = new FakeConsumerClient();
    const runner = runnerOver(client);
    runner.take({ topic: TOPIC, partition: 0 }, '5');
    assert.throws(() => runner.take({ topic: TOPIC, partition: 0 }, '4'), RangeError);
  });

  it('commits at most once per interval, the last acknowledgements in one commit', async () => {
    const client = new FakeConsumerClient();
    const acks: Ack[] = [];
    const runner = runnerOver(client, { commitIntervalMs: 50 });
    await runner.start(async (batch, ctx) => { for (const m of batch.messages) acks.push(ctx.take(m.offset)); });
    client.assign('m1', { [TOPIC]: [0] });
    await client.deliver(TOPIC, 0, ['0', '1', '2', '3']);
    for (const ack of acks) { ack(); await settle(); }
    assert.equal(client.commits.length, 1, 'the first acknowledgement commits at once, the rest wait for the interval');
    await new Promise((resolve) => setTimeout(resolve, 70));
    assert.equal(client.commits.length, 2);
    assert.deepEqual(client.commits.at(-1), [{ topic: TOPIC, partition: 0, offset: '4' }]);
  });

  it('a failed commit is made again, and commits that fail for long are reported as stalled', async () => {
    const client = new FakeConsumerClient();
    let now = 0;
    let failing = true;
    client.onCommit = async () => { if (failing) throw new Error('coordinator moved'); };
    const runner = runnerOver(client, { clock: () => now, commitIntervalMs: 10 });
    let ack: Ack | undefined;
    await runner.start(async (batch, ctx) => { ack = ctx.take(batch.messages[0]!.offset); });
    client.assign('m1', { [TOPIC]: [0] });
    await client.deliver(TOPIC, 0, ['0']);
    ack!();
    // The first commit waits for its interval, fails, and is asked for again every interval.
    await new Promise((resolve) => setTimeout(resolve, 30));
    now = 5000;
    try {
      assert.equal(runner.commits.commitsStalled(now), true);
    } finally {
      failing = false;
    }
    await new Promise((resolve) => setTimeout(resolve, 40));
    assert.deepEqual(client.commits.at(-1), [{ topic: TOPIC, partition: 0, offset: '1' }]);
    assert.equal(runner.commits.commitsStalled(now), false);
  });
});

describe('ConsumerRunner: rebalances', () => {
  it('tells the service its new partitions, and drops tracking of the ones it lost first', async () => {
    const client = new FakeConsumerClient();
    const seen: Assignment[] = [];
    const runner = runnerOver(client, { onAssigned: (a) => { seen.push(a); assert.equal(runner.offsets.readPosition(TOPIC, 0), undefined, 'partition 0 is gone before the callback'); } });
    await runner.start(async () => undefined);
    runner.take({ topic: TOPIC, partition: 0 }, '7');
    runner.take({ topic: TOPIC, partition: 1 }, '9');
    client.assign('m2', { [TOPIC]: [1, 2] });
    assert.equal(seen.length, 1);
    assert.equal(seen[0]!.memberId, 'm2');
    assert.deepEqual([...seen[0]!.keys].sort(), [`${TOPIC}:1`, `${TOPIC}:2`]);
    assert.equal(runner.offsets.readPosition(TOPIC, 1), '10', 'a kept partition keeps its tracking');
  });

  it('before rejoining, the service finishes what it can and the runner commits what was acknowledged', async () => {
    const client = new FakeConsumerClient();
    let ack: Ack | undefined;
    const order: string[] = [];
    const runner = runnerOver(client, { commitIntervalMs: 60_000, onRevoking: async () => { order.push('service'); ack!(); } });
    client.onCommit = async () => { order.push('commit'); };
    await runner.start(async (batch, ctx) => { ack = ctx.take(batch.messages[0]!.offset); });
    client.assign('m1', { [TOPIC]: [0] });
    await client.deliver(TOPIC, 0, ['0', '1']);
    runner.take({ topic: TOPIC, partition: 0 }, '1')();
    await settle();
    await client.rebalance();
    assert.deepEqual(order, ['service', 'commit']);
    assert.deepEqual(client.commits.at(-1), [{ topic: TOPIC, partition: 0, offset: '2' }]);
  });

  it('a runner of transactional commits never commits, rebalance or stop', async () => {
    const client = new FakeConsumerClient();
    const runner = runnerOver(client, { commits: 'transactional' });
    await runner.start(async () => undefined);
    client.assign('m1', { [TOPIC]: [0] });
    await client.deliver(TOPIC, 0, ['0']);
    await client.rebalance();
    await runner.stop();
    assert.deepEqual(client.commits, []);
    assert.equal(client.disconnected, true);
  });
});

describe('ConsumerRunner: reading again later', () => {
  it('pauses the partition, seeks back, and resumes it when the time is up; the other partitions are untouched', async () => {
    const client = new FakeConsumerClient();
    const runner = runnerOver(client, { commits: 'none' });
    runner.readAgainLater({ topic: TOPIC, partition: 3, offset: '40' }, 20);
    assert.deepEqual(client.pauses, [[{ topic: TOPIC, partitions: [3] }]]);
    assert.deepEqual(client.seeks, [{ topic: TOPIC, partition: 3, offset: '40' }]);
    assert.deepEqual(client.resumes, []);
    await new Promise((resolve) => setTimeout(resolve, 40));
    assert.deepEqual(client.resumes, [[{ topic: TOPIC, partitions: [3] }]]);
  });

  it('a partition taken away meanwhile is not resumed', async () => {
    const client = new FakeConsumerClient();
    const runner = runnerOver(client, { commits: 'none' });
    await runner.start(async () => undefined);
    runner.readAgainLater({ topic: TOPIC, partition: 3, offset: '40' }, 20);
    client.assign('m1', { [TOPIC]: [0] });
    await new Promise((resolve) => setTimeout(resolve, 40));
    assert.deepEqual(client.resumes, []);
  });
});

describe('ConsumerRunner: stopping', () => {
  it('hands over no batch once stopping', async () => {
    const client = new FakeConsumerClient();
    let handled = 0;
    const runner = runnerOver(client, { commits: 'none' });
    await runner.start(async () => { handled++; });
    await runner.stop();
    await client.deliver(TOPIC, 0, ['0']);
    assert.equal(handled, 0);
    assert.equal(client.disconnected, true);
  });

  it('pauses everything, lets the batch and taken records finish, commits them, then leaves the group', async () => {
    const client = new FakeConsumerClient();
    let ack: Ack | undefined;
    let release!: () => void;
    const held = new Promise<void>((resolve) => { release = resolve; });
    const runner = runnerOver(client, { commitIntervalMs: 60_000 });
    await runner.start(async (batch, ctx) => { ack = ctx.take(batch.messages[0]!.offset); await held; });
    client.assign('m1', { [TOPIC]: [0] });
    const delivering = client.deliver(TOPIC, 0, ['0']);
    await settle();
    const idle = new Promise<void>((resolve) => setTimeout(() => { ack!(); resolve(); }, 20));
    const stopping = runner.stop({ idle: () => idle });
    await settle();
    assert.deepEqual(client.pauses.at(-1), [{ topic: TOPIC }]);
    assert.equal(client.stopped, false, 'still in the group while the batch runs');
    release();
    await delivering;
    await stopping;
    assert.deepEqual(client.commits.at(-1), [{ topic: TOPIC, partition: 0, offset: '1' }]);
    assert.equal(client.stopped, true);
    assert.equal(client.disconnected, true);
  });

  it('a final commit left unanswered does not hold the stop past its bound', async () => {
    const client = new FakeConsumerClient();
    client.onCommit = () => new Promise(() => undefined);
    const runner = runnerOver(client, { commitIntervalMs: 60_000 });
    await runner.start(async () => undefined);
    runner.take({ topic: TOPIC, partition: 0 }, '0')();
    const started = Date.now();
    await runner.stop({ drainMs: 10, commitMs: 30 });
    assert.ok(Date.now() - started < 1000);
    assert.equal(client.disconnected, true);
  });
});
