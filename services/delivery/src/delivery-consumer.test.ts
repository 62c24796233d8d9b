import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Registry } from 'prom-client';
import type { AvroCodec } from '@switchyard/platform/codec/avro-codec';
import type { Consumer, EachBatchPayload } from '@switchyard/platform/kafka/client';
import type { Logger } from '@switchyard/platform/logger';
import type { DeliveryTask } from '@switchyard/platform/schemas/generated';
import { DeliveryConsumer } from './delivery-consumer.js';
import { deliveryMetrics } from './delivery-metrics.js';
import type { TaskRunner } from './task-runner.js';

// The consumer against a scripted kafkajs consumer: batches are handed to eachBatch by the test,
// tasks finish when the test says so, and every pause, resume, seek and commit is recorded.

const TOPIC = 'delivery';

const task = (id: string, destinationId = 'd1'): DeliveryTask => ({
  taskId: id, messageId: id, sourceId: 's', destinationId, eventType: 'track', userKey: 'u', body: '{}', receivedAt: 0, createdAt: 0,
  attempt: 0, firstAttemptAt: null, deadline: null, notBefore: null, pendingUrls: null, lastStatus: null, lastError: null,
});

const settle = () => new Promise((r) => setImmediate(r));

function harness(limits: { perDestination: number; waiting: number }) {
  const calls: string[] = [];
  let eachBatch!: (p: EachBatchPayload) => Promise<void>;
  let onJoin!: (e: { payload: { memberAssignment: Record<string, number[]> } }) => void;
  const paused = new Set<string>();
  const committed = new Map<number, string>();
  const consumer = {
    events: { GROUP_JOIN: 'join' },
    subscribe: async () => {},
    on: (_event: string, fn: typeof onJoin) => { onJoin = fn; },
    run: async (cfg: { eachBatch: typeof eachBatch }) => { eachBatch = cfg.eachBatch; },
    pause: (tps: Array<{ topic: string; partitions?: number[] }>) => { for (const { partitions } of tps) for (const p of partitions ?? []) { paused.add(`${p}`); calls.push(`pause ${p}`); } },
    resume: (tps: Array<{ topic: string; partitions: number[] }>) => { for (const { partitions } of tps) for (const p of partitions) { paused.delete(`${p}`); calls.push(`resume ${p}`); } },
    seek: ({ partition, offset }: { partition: number; offset: string }) => { calls.push(`seek ${partition}@${offset}`); },
    paused: () => [{ topic: TOPIC, partitions: [...paused].map(Number) }],
    commitOffsets: async (list: Array<{ partition: number; offset: string }>) => { for (const { partition, offset } of list) committed.set(partition, offset); },
    stop: async () => {},
  } as unknown as Consumer;
  const codec = {
    decodeKnown: (value: Buffer) => ({ name: 'io.switchyard.pipeline.DeliveryTask', value: JSON.parse(value.toString()) as DeliveryTask, schemaId: 1 }),
    decode: async (value: Buffer) => ({ name: 'io.switchyard.pipeline.DeliveryTask', value: JSON.parse(value.toString()) as DeliveryTask, schemaId: 1 }),
  } as unknown as AvroCodec;
  const running = new Map<string, () => void>();
  const started: string[] = [];
  const runner = {
    circuitOpen: () => false,
    run: (t: DeliveryTask) => new Promise<void>((resolve) => { started.push(t.taskId); running.set(t.taskId, resolve); }),
    defer: async () => {},
  } as unknown as TaskRunner;
  const logger = { info: () => {}, warn: () => {}, error: () => {} } as unknown as Logger;
  const delivery = new DeliveryConsumer({
    consumer, codec, runner, topics: [TOPIC], metrics: deliveryMetrics(new Registry()), logger, clock: Date.now,
    maxInFlight: 100, maxInFlightPerDestination: limits.perDestination, maxWaitingPerDestination: limits.waiting, commitIntervalMs: 0,
    setAside: async () => {},
  });

  /** Hands kafkajs's batch of these tasks (offsets from `first`) to the consumer; resolves with the offset it resolved. */
  const batch = async (partition: number, first: number, tasks: DeliveryTask[]): Promise<string | undefined> => {
    let resolved: string | undefined;
    await eachBatch({
      batch: { topic: TOPIC, partition, messages: tasks.map((t, i) => ({ offset: String(first + i), value: Buffer.from(JSON.stringify(t)) })), offsetLag: () => '0' },
      resolveOffset: (o: string) => { resolved = o; }, heartbeat: async () => {}, isRunning: () => true, isStale: () => false,
    } as unknown as EachBatchPayload);
    return resolved;
  };
  const finish = async (id: string) => {
    running.get(id)!();
    running.delete(id);
    await settle();
  };
  return { delivery, calls, started, running, committed, paused, batch, finish, join: (a: Record<string, number[]>) => onJoin({ payload: { memberAssignment: a } }) };
}

describe('DeliveryConsumer: a destination with a full queue', () => {
  it('pauses the partition and keeps the rest of the batch, handing it out in order once the destination drains, without fetching it again', async () => {
    const h = harness({ perDestination: 2, waiting: 2 });
    await h.delivery.start();
    const ids = Array.from({ length: 8 }, (_, i) => `t${i}`);
    // 2 in flight and 2 waiting fill the destination: t4 and what follows are parked.
    const resolved = await h.batch(0, 0, ids.map((id) => task(id)));
    await settle();
    assert.deepEqual(h.started, ['t0', 't1']);
    assert.deepEqual(h.calls, ['pause 0'], 'paused, and no seek back: the records are kept');
    assert.equal(resolved, '7', 'kafkajs reads on after the batch once resumed');

    // t0 done: t2 takes its slot and 1 task waits (half the queue), so the parked records are handed
    // out from t4 until the destination is full again (t5 parked); and so on as tasks finish.
    await h.finish('t0');
    assert.deepEqual(h.started, ['t0', 't1', 't2']);
    assert.deepEqual(h.calls, ['pause 0', 'pause 0']);
    for (const id of ids.slice(1)) await h.finish(id);
    assert.deepEqual(h.started, ids, 'every task once, in offset order');
    assert.deepEqual(h.calls.filter((c) => !c.startsWith('pause')), ['resume 0'], 'resumed once the parked records were all handed out, never seeked');
    await h.delivery.stop(1000);
    assert.equal(h.committed.get(0), '8');
  });

  it('a rebalance drops parked records; a kept partition is read again from its first parked record when nothing before it is unfinished', async () => {
    const h = harness({ perDestination: 1, waiting: 0 });
    await h.delivery.start();
    await h.batch(0, 0, [task('a0'), task('a1')]);
    await h.batch(1, 10, [task('b0'), task('b1')]); // the destination is full from partition 0: parked at its first record
    await settle();
    assert.deepEqual(h.started, ['a0']);
    h.calls.length = 0;
    h.join({ [TOPIC]: [0, 1] });
    assert.deepEqual(h.calls.filter((c) => c.startsWith('seek')).sort(), ['seek 0@0', 'seek 1@10'], 'partition 0 from a0, still in flight; partition 1 from its first parked record');
    await h.finish('a0');
    assert.deepEqual(h.started, ['a0'], 'parked records are not handed out after the rebalance: they are fetched again');
    await h.delivery.stop(1000);
  });
});
