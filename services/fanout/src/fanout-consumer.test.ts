// runFanout driven like a Kafka Streams topology test: ingest records in through the platform's fake
// consumer client (the test plays its fetch loop),
// the real PartitionTransactions and PositionLog over an in-memory transactional broker, the real
// Avro codec over an in-memory registry; assertions on what the committed transactions wrote.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { AvroRecordTypes, AvroSchemaName } from '@switchyard/platform/codec/avro-codec';
import type { RecordBatch } from '@switchyard/platform/consuming/consumer-client';
import { FakeConsumerClient } from '@switchyard/platform/consuming/test-support/fake-consumer-client';
import { frame } from '@switchyard/platform/codec/wire-format';
import { ConfigState } from '@switchyard/platform/config-view/config-state';
import { DestinationStates, REFUSING_FRESH_MS } from '@switchyard/platform/holds/destination-states';
import { PartitionTransactions, partitionTransactionalId } from '@switchyard/platform/exactly-once/partition-transactions';
import { PositionLog } from '@switchyard/platform/exactly-once/position-log';
import { originHeaders } from '@switchyard/platform/kafka/record-origin';
import { topicNames } from '@switchyard/platform/kafka/topics';
import { createLogger } from '@switchyard/platform/logger';
import { Registry, type Counter } from '@switchyard/platform/metrics';
import type { FilterReason as UsageReason, UsageOutcome } from '@switchyard/platform/usage/usage-tally';
import type { Track } from '@switchyard/platform/schemas/generated';
import { fanoutRunner, runFanout } from './fanout-consumer.js';
import type { FilterReason } from './fanout-decision.js';
import { fanoutMetrics } from './fanout-metrics.js';
import { taskPartition } from './task-partitions.js';
import { FakeTransactionBroker, type WrittenRecord } from './test-support/fake-transactions.js';
import { offlineCodec } from './test-support/offline-codec.js';

const T = Date.UTC(2026, 10, 22, 10);
const NOW = T + 1000;
const PREFIX = 'test.';
const topics = topicNames(PREFIX);
/** More delivery partitions than ingest ones: a task's key picks among those its ingest partition owns. */
const LAYOUT = { ingest: 2, delivery: 6 };
const TIER_MS = 10_000;
const { codec, registry: schemaRegistry } = await offlineCodec();
const logger = createLogger({ service: 'test', level: 'silent' });

/** src has dst-a (no filter), dst-b (only "Order *" track events; `limitB` its rate limit) and dst-off (disabled); quiet has none; off is disabled. */
function configuration(limitB: number | null = null): ConfigState {
  const c = new ConfigState();
  const source = (id: string, enabled = true) => c.apply(`source:${id}`, { kind: 'source', value: { id, name: id, enabled, writeKeys: [`wk-${id}`], createdAt: 0, updatedAt: 0 } });
  const destination = (id: string, sourceId: string, enabled: boolean, filter: string | null, rateLimit: { perSecond: number } | null = null) => c.apply(`destination:${id}`, {
    kind: 'destination',
    value: { id, sourceId, name: id, type: 'webhooks', enabled, sharedSecret: null, webhooks: [{ url: 'https://hooks.example.com/in', headers: {}, clientCertificate: null }], createdAt: 0, updatedAt: 0, filter, standardSignatures: false, rateLimit, signingSecrets: [], retry: null, disabledReason: null, disabledAt: null, notificationTypes: [] },
  });
  source('src'); source('quiet'); source('off', false);
  destination('dst-a', 'src', true, null);
  destination('dst-b', 'src', true, '{"events":["Order *"]}', limitB === null ? null : { perSecond: limitB });
  destination('dst-off', 'src', false, null);
  destination('off-dst', 'off', true, null);
  return c;
}

const track = (over: Partial<Track> = {}): Track => ({
  messageId: 'm-1', sourceId: 'src', userId: 'u-1', anonymousId: null, event: 'Order Completed', properties: null, timestamp: T,
  originalTimestamp: null, sentAt: null, receivedAt: T, context: null, integrations: null, ...over,
});
/** An ingest record as ingest writes it (origin header), or with `direct` as another producer would. */
const ingest = (offset: number, event: Track, { direct = false } = {}): InputRecord => ({
  offset, value: codec.encode('io.switchyard.event.Track', event), ...(direct ? {} : { headers: originHeaders.ingest }),
});

type Usage = { sourceId: string; outcome: UsageOutcome; reason?: UsageReason };

/** One ingest record as the client hands it over: where it sits, its value and its headers. */
interface InputRecord {
  offset: number;
  value: Buffer | null;
  headers?: Readonly<Record<string, string>>;
}

/**
 * One fetched batch of an ingest partition, handed to the runner as the client's fetch loop would:
 * resolves once the handler did, rejects as it did. `stale`: no longer this member's.
 */
async function deliver(client: FakeConsumerClient, partition: number, records: InputRecord[], { highWatermark, stale = false }: { highWatermark?: number; stale?: boolean } = {}): Promise<{ heartbeats: number }> {
  const handler = client.run_?.eachBatch;
  if (!handler) throw new Error('run() was not called');
  const last = String(records.at(-1)?.offset ?? -1);
  const messages = records.map((r) => ({ offset: String(r.offset), key: null, value: r.value, headers: { ...r.headers }, timestamp: '0' }));
  const batch: RecordBatch = { topic: topics.ingest, partition, messages, highWatermark: String(highWatermark ?? Number(last) + 1), lastOffset: () => last, offsetLag: () => '0' };
  let heartbeats = 0;
  await handler(batch, { current: () => !stale, heartbeat: async () => { heartbeats++; }, resolveOffset: () => undefined });
  return { heartbeats };
}

/** The group assigns this member ingest `partitions`. */
const join = (client: FakeConsumerClient, partitions: number[]) => client.assign('member-1', { [topics.ingest]: partitions });

/** One fan-out instance over `broker`: its client joined to ingest partitions 0 and 1 unless told otherwise. */
async function fanoutOver(broker: FakeTransactionBroker, { partitions = [0, 1], holds, recordTrace = true, limitB = null }: { partitions?: number[]; holds?: DestinationStates; recordTrace?: boolean; limitB?: number | null } = {}) {
  const client = new FakeConsumerClient(`${PREFIX}fanout`);
  const metrics = fanoutMetrics(new Registry());
  const usage: Usage[] = [];
  const transactions = new PartitionTransactions({
    groupId: `${PREFIX}fanout`, topic: topics.ingest, logger, onFence: () => metrics.fenced.inc(),
    createProducer: (p) => broker.producer(partitionTransactionalId(PREFIX, 'fanout', p)),
    committedOffset: async () => undefined,
    positions: {
      log: new PositionLog({ topic: topics.fanoutPositions, inputTopic: topics.ingest, source: broker.positions(topics.fanoutPositions), codec, clock: () => NOW }),
      groupOffsets: { note: () => undefined, retain: () => undefined },
    },
  });
  await runFanout(fanoutRunner(client, { transactions, topics, logger }), {
    transactions, codec, config: configuration(limitB), topics, metrics, logger, clock: () => NOW, recordTrace, layout: LAYOUT,
    countUsage: (sourceId, _receivedAt, outcome, n, reason) => { for (let i = 0; i < n; i++) usage.push({ sourceId, outcome, ...(reason ? { reason } : {}) }); },
    ...(holds ? { holds: { states: holds, policy: { tiersMs: [TIER_MS], deadlineMs: 3_600_000 } } } : {}),
  });
  join(client, partitions);
  return { client, metrics, usage };
}

/** The values of written records, each checked to be a `name`. */
async function decoded<N extends AvroSchemaName>(records: WrittenRecord[], name: N): Promise<Array<AvroRecordTypes[N]>> {
  const values: Array<AvroRecordTypes[N]> = [];
  for (const r of records) {
    const d = await codec.decode(r.value);
    assert.equal(d.name, name);
    values.push(d.value as AvroRecordTypes[N]);
  }
  return values;
}

/** A counter's value for some labels (0 when that series is absent). */
async function count(counter: Pick<Counter, 'get'>, labels: Record<string, string> = {}): Promise<number> {
  const { values } = await counter.get();
  return values.find((v) => Object.entries(labels).every(([k, x]) => v.labels[k] === x))?.value ?? 0;
}

/** The ingest position each committed transaction moved partition `p` to. */
async function positions(broker: FakeTransactionBroker, p: number): Promise<number[]> {
  const records = broker.records(topics.fanoutPositions).filter((r) => r.partition === p);
  return (await decoded(records, 'io.switchyard.pipeline.ConsumedPosition')).map((v) => v.next);
}

describe('runFanout: one ingest batch, one transaction', () => {
  it('reads ingest from its first record (where the group has no offset), a fetch\'s partitions side by side, and commits nothing outside its transactions', async () => {
    const broker = new FakeTransactionBroker();
    const { client } = await fanoutOver(broker);
    assert.deepEqual(client.subscribed, { topics: [topics.ingest], from: 'earliest' });
    assert.equal(client.run_?.partitionsAtOnce, 64);
    await deliver(client, 0, [ingest(0, track())]);
    await client.rebalance();
    assert.equal(broker.committed.length, 1);
    assert.deepEqual(client.commits, [], 'the position log holds the position; the group\'s offsets follow elsewhere');
  });

  it('one task per enabled destination the filters let through, each in the delivery partition task-partitions.ts gives it', async () => {
    const broker = new FakeTransactionBroker();
    const { client, metrics } = await fanoutOver(broker);
    await deliver(client, 1, [ingest(0, track({ messageId: 'm-1', userId: 'u-1' })), ingest(1, track({ messageId: 'm-2', userId: 'u-2' }))]);
    const written = broker.records(topics.delivery);
    const tasks = await decoded(written, 'io.switchyard.pipeline.DeliveryTask');
    assert.deepEqual(tasks.map((t) => t.taskId).sort(), ['m-1:dst-a', 'm-1:dst-b', 'm-2:dst-a', 'm-2:dst-b'], 'none for the disabled dst-off');
    for (const r of written) {
      assert.equal(r.partition, taskPartition(LAYOUT, 1, r.key!));
      assert.equal(r.partition! % LAYOUT.ingest, 1, 'a delivery partition only ingest partition 1 writes');
    }
    assert.equal(await count(metrics.tasks, { destination: 'dst-a' }), 2);
    assert.equal(await count(metrics.tasks, { destination: 'dst-b' }), 2);
    assert.equal(await count(metrics.consumed), 2);
  });

  it('the tasks, the batch\'s one trace record and the partition\'s next position commit together, under the partition\'s transactional id', async () => {
    const broker = new FakeTransactionBroker();
    const { client, metrics } = await fanoutOver(broker);
    const { heartbeats } = await deliver(client, 1, [ingest(4, track({ messageId: 'm-4' })), ingest(5, track({ messageId: 'm-5' })), ingest(6, track({ messageId: 'm-6' }))], { highWatermark: 10 });
    assert.equal(broker.committed.length, 1);
    const [txn] = broker.committed;
    assert.equal(txn!.id, `${PREFIX}fanout-p1`);
    assert.deepEqual(txn!.records.map((r) => r.topic).sort(), [...Array(6).fill(topics.delivery), topics.deliveryAttempts, topics.fanoutPositions]);
    assert.deepEqual(txn!.offsets, [], 'positions go to the position log, not the group');
    const [trace] = await decoded(txn!.records.filter((r) => r.topic === topics.deliveryAttempts), 'io.switchyard.pipeline.TraceRecords');
    assert.deepEqual(trace!.fanouts.map((f) => [f.messageId, f.destinationIds]), [['m-4', ['dst-a', 'dst-b']], ['m-5', ['dst-a', 'dst-b']], ['m-6', ['dst-a', 'dst-b']]]);
    assert.equal(txn!.records.find((r) => r.topic === topics.deliveryAttempts)!.key, 'fanout-1');
    assert.deepEqual(await positions(broker, 1), [7], 'the offset after the batch\'s last');
    assert.equal(heartbeats, 1);
    assert.equal((await metrics.lag.get()).values.find((v) => v.labels.partition === '1')?.value, 3);
  });

  it('a destination whose filter keeps the event gets no task; the event counts as filtered once, in metrics and usage', async () => {
    const broker = new FakeTransactionBroker();
    const { client, metrics, usage } = await fanoutOver(broker);
    await deliver(client, 0, [ingest(0, track({ event: 'Signed Up' }))]);
    const tasks = await decoded(broker.records(topics.delivery), 'io.switchyard.pipeline.DeliveryTask');
    assert.deepEqual(tasks.map((t) => t.destinationId), ['dst-a']);
    const [trace] = await decoded(broker.records(topics.deliveryAttempts), 'io.switchyard.pipeline.TraceRecords');
    assert.deepEqual(trace!.fanouts[0]!.filteredDestinationIds, ['dst-b']);
    assert.equal(await count(metrics.filtered, { reason: 'filter' }), 1);
    assert.deepEqual(usage, [{ sourceId: 'src', outcome: 'filtered', reason: 'filter' }]);
  });

  it('events kept from every destination write no task, count by reason, and still move the position', async () => {
    const broker = new FakeTransactionBroker();
    const { client, metrics, usage } = await fanoutOver(broker);
    const cases: Array<[Partial<Track>, FilterReason]> = [
      [{ integrations: '{"Webhooks":false}' }, 'integrations'],
      [{ sourceId: 'quiet' }, 'no_destination'],
      [{ sourceId: 'nope' }, 'source_unknown'],
      [{ sourceId: 'off' }, 'source_disabled'],
    ];
    await deliver(client, 0, cases.map(([over], i) => ingest(i, track({ messageId: `m-${i}`, ...over }))));
    assert.deepEqual(broker.records(topics.delivery), []);
    for (const [, reason] of cases) assert.equal(await count(metrics.filtered, { reason }), 1, reason);
    assert.deepEqual(usage, [{ sourceId: 'src', outcome: 'filtered', reason: 'integrations' }], 'integrations count in usage; an unknown or disabled source counts nowhere');
    assert.deepEqual(await positions(broker, 0), [4]);
  });

  it('with traces off, the transaction holds the tasks and the position only', async () => {
    const broker = new FakeTransactionBroker();
    const { client } = await fanoutOver(broker, { recordTrace: false });
    await deliver(client, 0, [ingest(0, track())]);
    assert.deepEqual(broker.committed[0]!.records.map((r) => r.topic).sort(), [topics.delivery, topics.delivery, topics.fanoutPositions]);
  });
});

describe('runFanout: records that cannot be fanned out go to invalid-events, in the batch\'s transaction', () => {
  it('an undecodable record, an unknown schema id, a direct record breaking a call rule and a record that is no event: each with its reason and where it was read', async () => {
    const broker = new FakeTransactionBroker();
    const { client, metrics, usage } = await fanoutOver(broker);
    const body = codec.encode('io.switchyard.event.Track', track()).subarray(5);
    await deliver(client, 0, [
      { offset: 10, value: Buffer.from('not a Confluent frame'), headers: originHeaders.ingest },
      { offset: 11, value: frame(4242, body), headers: originHeaders.ingest },
      ingest(12, track({ messageId: 'm-direct', userId: null, anonymousId: null }), { direct: true }),
      { offset: 13, value: codec.encode('io.switchyard.pipeline.ConsumedPosition', { topic: 'x', partition: 0, next: 1, committedAt: 0 }), headers: originHeaders.ingest },
      ingest(14, track({ messageId: 'm-ok' })),
    ]);
    assert.equal(broker.committed.length, 1, 'one transaction for the whole batch');
    const invalid = await decoded(broker.records(topics.invalidEvents), 'io.switchyard.pipeline.InvalidEvent');
    assert.deepEqual(invalid.map((e) => [e.reason, e.stage, e.originTopic, e.originPartition, e.originOffset, e.messageId]), [
      ['undecodable', 'fanout', topics.ingest, 0, '10', null],
      ['unknown_schema', 'fanout', topics.ingest, 0, '11', null],
      ['missing_user_id', 'fanout', topics.ingest, 0, '12', 'm-direct'],
      ['unexpected_type', 'fanout', topics.ingest, 0, '13', null],
    ]);
    assert.deepEqual(invalid[0]!.payload, Buffer.from('not a Confluent frame'), 'the raw value is kept');
    assert.deepEqual(broker.records(topics.invalidEvents).map((r) => r.key), [null, null, null, null]);
    const tasks = await decoded(broker.records(topics.delivery), 'io.switchyard.pipeline.DeliveryTask');
    assert.deepEqual(tasks.map((t) => t.taskId), ['m-ok:dst-a', 'm-ok:dst-b'], 'the records after them are fanned out');
    for (const reason of ['undecodable', 'unknown_schema', 'missing_user_id', 'unexpected_type']) assert.equal(await count(metrics.invalid, { reason }), 1, reason);
    assert.deepEqual(usage, [{ sourceId: 'src', outcome: 'rejected' }], 'a direct record breaking a rule counts as a rejected call');
    assert.deepEqual(await positions(broker, 0), [15]);
  });

  it('a direct record that keeps the call rules gets its tasks and counts as an accepted call', async () => {
    const broker = new FakeTransactionBroker();
    const { client, usage } = await fanoutOver(broker);
    await deliver(client, 0, [ingest(0, track(), { direct: true })]);
    assert.equal(broker.records(topics.delivery).length, 2);
    assert.deepEqual(usage, [{ sourceId: 'src', outcome: 'accepted' }]);
  });
});

describe('runFanout: a transaction that fails', () => {
  it('writes nothing and counts nothing; the batch handed again is fenced in anew and written once, with its position', async () => {
    const broker = new FakeTransactionBroker();
    const { client, metrics, usage } = await fanoutOver(broker, { partitions: [0] });
    const batch = [ingest(0, track({ messageId: 'm-0' })), ingest(1, track({ messageId: 'm-1', event: 'Signed Up' }))];
    broker.failNextCommit(new Error('the transaction coordinator went away'));
    await assert.rejects(deliver(client, 0, batch), /coordinator went away/);
    assert.deepEqual(broker.committed, [], 'no task, no trace, no position');
    assert.equal(broker.aborted, 1);
    assert.deepEqual(usage, [], 'usage counts only what committed');
    assert.equal(await count(metrics.tasks, { destination: 'dst-a' }), 0);
    // The client hands the same records again: nothing moved the partition's position.
    await deliver(client, 0, batch);
    assert.equal(broker.committed.length, 1);
    const tasks = await decoded(broker.records(topics.delivery), 'io.switchyard.pipeline.DeliveryTask');
    assert.deepEqual(tasks.map((t) => t.taskId), ['m-0:dst-a', 'm-0:dst-b', 'm-1:dst-a']);
    assert.deepEqual(await positions(broker, 0), [2]);
    assert.equal(broker.producers.get(`${PREFIX}fanout-p0`), 2, 'a new producer fenced the partition in again');
    assert.equal(await count(metrics.fenced), 2);
    assert.deepEqual(usage, [{ sourceId: 'src', outcome: 'filtered', reason: 'filter' }], 'counted once');
    assert.equal(await count(metrics.tasks, { destination: 'dst-a' }), 2);
  });

  it('an instance that lost its partition while paused is refused; the new owner skips what was committed and writes the rest once', async () => {
    const broker = new FakeTransactionBroker();
    const first = await fanoutOver(broker, { partitions: [0] });
    const events = [0, 1, 2, 3].map((i) => ingest(i, track({ messageId: `m-${i}` })));
    await deliver(first.client, 0, events.slice(0, 2));
    const second = await fanoutOver(broker, { partitions: [0] }); // the group moved partition 0 while the first was paused
    await assert.rejects(deliver(first.client, 0, events.slice(2)), /fenced/);
    assert.equal(broker.committed.length, 1, 'the paused instance wrote nothing more');
    // The new owner's client read the group's (trailing) offset: it fetches from the start again.
    await deliver(second.client, 0, events);
    assert.equal(await count(second.metrics.skipped), 2);
    const tasks = await decoded(broker.records(topics.delivery), 'io.switchyard.pipeline.DeliveryTask');
    assert.deepEqual(tasks.map((t) => t.taskId).sort(), events.flatMap((_, i) => [`m-${i}:dst-a`, `m-${i}:dst-b`]), 'every task exactly once');
    assert.deepEqual(await positions(broker, 0), [2, 4]);
  });

  it('partitions run side by side, each in its own transaction: one failing leaves the other committed, and a partition keeps its producer from batch to batch', async () => {
    const broker = new FakeTransactionBroker();
    const { client } = await fanoutOver(broker);
    broker.failNextCommit(new Error('not the leader'), `${PREFIX}fanout-p0`);
    const [zero, one] = await Promise.allSettled([
      deliver(client, 0, [ingest(0, track({ messageId: 'm-p0' }))]),
      deliver(client, 1, [ingest(0, track({ messageId: 'm-p1' }))]),
    ]);
    assert.equal(zero.status, 'rejected');
    assert.equal(one.status, 'fulfilled');
    await deliver(client, 1, [ingest(1, track({ messageId: 'm-p1-next' }))]);
    assert.deepEqual(broker.committed.map((t) => t.id), [`${PREFIX}fanout-p1`, `${PREFIX}fanout-p1`]);
    assert.deepEqual(await positions(broker, 1), [1, 2]);
    assert.deepEqual(await positions(broker, 0), []);
    assert.equal(broker.producers.get(`${PREFIX}fanout-p1`), 1);
  });

  it('a batch fetched for a partition since assigned elsewhere, or stale, is left alone', async () => {
    const broker = new FakeTransactionBroker();
    const { client } = await fanoutOver(broker);
    await deliver(client, 1, [ingest(0, track())], { stale: true });
    join(client, [1]);
    await deliver(client, 0, [ingest(0, track())]);
    assert.deepEqual(broker.committed, []);
  });
});

describe('runFanout: destinations delivery reports refusing', () => {
  const refusing = (at: number, reason: string | null = null) => {
    const states = new DestinationStates();
    states.apply({ destinationId: 'dst-b', refusing: true, at, writer: 'delivery-1', reason });
    return states;
  };

  it('their tasks are held as one range record in the first retry tier, in the same transaction; other destinations get their tasks', async () => {
    const broker = new FakeTransactionBroker();
    const { client, metrics } = await fanoutOver(broker, { holds: refusing(NOW - 1000) });
    await deliver(client, 0, [5, 6, 7].map((o) => ingest(o, track({ messageId: `m-${o}` }))));
    assert.equal(broker.committed.length, 1);
    const tasks = await decoded(broker.records(topics.delivery), 'io.switchyard.pipeline.DeliveryTask');
    assert.deepEqual(tasks.map((t) => t.taskId), ['m-5:dst-a', 'm-6:dst-a', 'm-7:dst-a']);
    const held = broker.records(topics.retry(1));
    assert.deepEqual(held.map((r) => r.key), ['dst-b:range:0']);
    const [range] = await decoded(held, 'io.switchyard.pipeline.DeferredRange');
    assert.deepEqual({ ...range, heldOffsets: [...range!.heldOffsets!] }, {
      destinationId: 'dst-b', topic: topics.ingest, partition: 0, fromOffset: 5, toOffset: 7, tasks: 3, heldOffsets: [5, 6, 7],
      attempt: 1, firstAttemptAt: NOW, deadline: NOW + 3_600_000, notBefore: NOW + TIER_MS, lastError: 'circuit_open',
    });
    const [trace] = await decoded(broker.records(topics.deliveryAttempts), 'io.switchyard.pipeline.TraceRecords');
    assert.deepEqual(trace!.deferrals.map((d) => [d.destinationId, d.messageIds, d.nextTier]), [['dst-b', ['m-5', 'm-6', 'm-7'], 1]]);
    assert.equal(await count(metrics.held, { destination: 'dst-b' }), 3);
    assert.equal(await count(metrics.tasks, { destination: 'dst-b' }), 0);
  });

  it('over its rate limit: held as a range of attempt 0 in the first tier (no attempt, no deadline, no deferral trace)', async () => {
    const broker = new FakeTransactionBroker();
    const { client, metrics } = await fanoutOver(broker, { holds: refusing(NOW - 1000, 'rate_limited'), limitB: 50 });
    await deliver(client, 0, [5, 6].map((o) => ingest(o, track({ messageId: `m-${o}` }))));
    const tasks = await decoded(broker.records(topics.delivery), 'io.switchyard.pipeline.DeliveryTask');
    assert.deepEqual(tasks.map((t) => t.taskId), ['m-5:dst-a', 'm-6:dst-a']);
    const [range] = await decoded(broker.records(topics.retry(1)), 'io.switchyard.pipeline.DeferredRange');
    assert.deepEqual([range!.attempt, range!.deadline, range!.notBefore, range!.lastError, [...range!.heldOffsets!]], [0, 0, NOW + TIER_MS, 'rate_limited', [5, 6]]);
    const [trace] = await decoded(broker.records(topics.deliveryAttempts), 'io.switchyard.pipeline.TraceRecords');
    assert.deepEqual(trace!.deferrals, []);
    assert.equal(await count(metrics.held, { destination: 'dst-b' }), 2);
  });

  it('a rate limit\'s hold lapses once the destination has no rate limit: its tasks are written', async () => {
    const broker = new FakeTransactionBroker();
    const { client } = await fanoutOver(broker, { holds: refusing(NOW - 1000, 'rate_limited') });
    await deliver(client, 0, [ingest(0, track())]);
    assert.equal(broker.records(topics.delivery).length, 2);
    assert.deepEqual(broker.records(topics.retry(1)), []);
  });

  it('a refusing state older than the freshness window holds nothing', async () => {
    const broker = new FakeTransactionBroker();
    const { client } = await fanoutOver(broker, { holds: refusing(NOW - REFUSING_FRESH_MS) });
    await deliver(client, 0, [ingest(0, track())]);
    assert.equal(broker.records(topics.delivery).length, 2);
    assert.deepEqual(broker.records(topics.retry(1)), []);
  });
});

describe('runFanout: a schema registry that does not answer', () => {
  it('the batch writes nothing and is read again from its first record a second later; then it is fanned out', async (ctx) => {
    ctx.mock.timers.enable({ apis: ['setTimeout'] });
    const broker = new FakeTransactionBroker();
    const { client, metrics } = await fanoutOver(broker);
    // A writer schema the codec has not seen yet (a newer producer's, say): it must ask the registry.
    schemaRegistry.alias(77, 'io.switchyard.event.Track');
    const body = codec.encode('io.switchyard.event.Track', track()).subarray(5);
    const batch = [ingest(20, track({ messageId: 'm-20' })), { offset: 21, value: frame(77, body), headers: originHeaders.ingest }];
    schemaRegistry.answering = false;
    try {
      await deliver(client, 1, batch);
    } finally {
      schemaRegistry.answering = true;
    }
    assert.deepEqual(broker.committed, [], 'not even the record before it');
    assert.deepEqual(client.seeks, [{ topic: topics.ingest, partition: 1, offset: '20' }]);
    assert.deepEqual(client.pauses, [[{ topic: topics.ingest, partitions: [1] }]]);
    assert.equal(await count(metrics.registryUnavailable), 1);
    assert.equal(await count(metrics.invalid, { reason: 'unknown_schema' }), 0, 'not set aside');
    ctx.mock.timers.tick(999);
    assert.deepEqual(client.resumes, []);
    ctx.mock.timers.tick(1);
    assert.deepEqual(client.resumes, [[{ topic: topics.ingest, partitions: [1] }]]);
    await deliver(client, 1, batch);
    const tasks = await decoded(broker.records(topics.delivery), 'io.switchyard.pipeline.DeliveryTask');
    assert.deepEqual(tasks.map((t) => t.taskId), ['m-20:dst-a', 'm-20:dst-b', 'm-1:dst-a', 'm-1:dst-b']);
    assert.deepEqual(await positions(broker, 1), [22]);
  });
});
