import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { AvroCodec } from '@switchyard/platform/codec/avro-codec';
import { RegistryUnavailableError } from '@switchyard/platform/errors';
import { createLogger } from '@switchyard/platform/logger';
import { Registry } from '@switchyard/platform/metrics';
import type { DeliveryTask } from '@switchyard/platform/schemas/generated';
import { DeliveryConsumer } from './delivery-consumer.js';
import { deliveryMetrics } from './delivery-metrics.js';
import { RangeTasks } from './range-tasks.js';
import { FakeConsumer, silentLogger, recordsOf, TOPIC } from './test-support/fake-consumer.js';
import type { TaskRunner } from './task-runner.js';

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
      client: consumer, codec, runner, topics: [TOPIC, TIER], deliveryTopic: TOPIC, metrics: deliveryMetrics(new Registry(), { retryTiers: 1 }),
      logger: createLogger({ service: 'test', level: 'silent' }), clock: Date.now, maxInFlight: 10, maxInFlightPerDestination: 10, maxWaitingPerDestination: 10, commitIntervalMs: 20,
      setAside: async (_value, topic, partition, offset, reason) => { setAside.push([topic, partition, offset, reason]); },
      readRange: async (topic, partition, from, to) => {
        read.push([topic, partition, from, to]);
        return values.map((v, i) => ({ offset: String(5 + i), key: Buffer.from(`src:u${5 + i}`), value: Buffer.from(v) }));
      },
    });
    await delivery.start();
    consumer.join('member-1', { [TIER]: [0] });
    await consumer.eachBatch!(recordsOf(TIER, 0, [{ offset: '40', value: Buffer.from('held') }]));
    await new Promise((r) => setTimeout(r, 30));
    return { consumer, read, setAside };
  }

  it('read from the ingest topic: the held events only, as the tasks fan-out would have written, with the range\'s attempt count', async () => {
    const sent: DeliveryTask[] = [];
    const runner = { rateLimitOf: () => undefined, underLimit: () => undefined, circuitOpen: () => false, destinationRefuses: () => false, run: async (t: DeliveryTask) => { sent.push(t); } } as unknown as TaskRunner;
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
      rateLimitOf: () => undefined, underLimit: () => undefined, circuitOpen: () => false,
      destinationRefuses: () => ++calls > 2, // the range's check and the first task's pass; the second task's is refused
      deferRangeAgain: async (r: { fromOffset: number; tasks: number; heldOffsets: number[] | null }) => { again.push(r); return true; },
      run: async () => undefined,
    } as unknown as TaskRunner;
    await heldRangeFellDue(runner);
    assert.deepEqual(again.map((r) => [r.fromOffset, r.tasks, r.heldOffsets]), [[7, 2, [7, 9]]]);
  });

  it('a held event that cannot be decoded is set aside on invalid-events, not dropped; the others run', async () => {
    const sent: string[] = [];
    const runner = { rateLimitOf: () => undefined, underLimit: () => undefined, circuitOpen: () => false, destinationRefuses: () => false, run: async (t: DeliveryTask) => { sent.push(t.taskId); } } as unknown as TaskRunner;
    const { consumer, setAside } = await heldRangeFellDue(runner, ['e:5', 'e:6', 'bad', 'e:8', 'e:9']);
    assert.deepEqual(sent, ['m5:hung', 'm9:hung']);
    assert.deepEqual(setAside, [[INGEST, 2, '7', 'held for hung: unknown schema id 99']]);
    assert.deepEqual(consumer.commits.at(-1), [{ topic: TIER, partition: 0, offset: '41' }]);
  });

  it('a held event whose schema the registry does not answer for (restarting) waits for it: made a task, not set aside', async () => {
    const sent: string[] = [];
    const runner = { rateLimitOf: () => undefined, underLimit: () => undefined, circuitOpen: () => false, destinationRefuses: () => false, run: async (t: DeliveryTask) => { sent.push(t.taskId); } } as unknown as TaskRunner;
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

describe('RangeTasks', () => {
  /** A range of dest `hung` over offsets 5–9 of the delivery topic, counting `tasks`. */
  const range = (tasks: number) => ({ destinationId: 'hung', topic: TOPIC, partition: 0, fromOffset: 5, toOffset: 9, tasks, attempt: 1, firstAttemptAt: 1, deadline: 0, notBefore: null, lastError: 'circuit_open', heldOffsets: null });
  /** Records `dest:n:key` (a task of dest, keyed `key:u`), `tier:n` (a retried task of hung) or `bad`. */
  function reader() {
    const decoded: string[] = [];
    const codec = {
      decodeKnown: (value: Buffer) => {
        decoded.push(value.toString());
        const [destinationId, n] = value.toString().split(':');
        if (destinationId === 'bad') throw new Error('unknown schema id 99');
        if (destinationId === 'tier') return { name: 'io.switchyard.pipeline.DeliveryTask', value: { taskId: `m${n}:hung`, destinationId: 'hung', attempt: 2, firstAttemptAt: 1, pendingUrls: null, notBefore: null } };
        return { name: 'io.switchyard.pipeline.DeliveryTask', value: { taskId: `m${n}:${destinationId}`, destinationId, attempt: 0, firstAttemptAt: null, pendingUrls: null, notBefore: null } };
      },
    } as unknown as AvroCodec;
    const tasks = new RangeTasks({ codec, logger: silentLogger(), setAside: async () => undefined, registryUnavailable: () => undefined, stopping: () => false });
    return { tasks, decoded };
  }
  const records = (values: string[]) => values.map((v, i) => ({ offset: String(5 + i), key: Buffer.from(`${v.split(':')[2] ?? v.split(':')[0]}:u`), value: Buffer.from(v) }));

  it("the range's destination's never-attempted tasks only, other destinations' records not decoded", async () => {
    const { tasks, decoded } = reader();
    const found = await tasks.tasksOfRange(records(['hung:5', 'ok:6', 'tier:7:hung', 'bad:8:hung', 'hung:9']), range(2));
    assert.deepEqual(found.map(({ offset, task }) => [offset, task.taskId]), [['5', 'm5:hung'], ['9', 'm9:hung']]);
    assert.deepEqual(decoded, ['hung:5', 'tier:7:hung', 'bad:8:hung', 'hung:9']);
  });

  it('fewer tasks by key than the range counted: every record is decoded', async () => {
    const { tasks, decoded } = reader();
    const found = await tasks.tasksOfRange(records(['hung:5:other', 'ok:6']), range(1));
    assert.deepEqual(found.map(({ task }) => task.taskId), ['m5:hung']);
    assert.deepEqual(decoded, ['hung:5:other', 'ok:6']);
  });
});
