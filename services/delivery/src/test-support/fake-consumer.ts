// The unit tests' consumer client: the platform's fake (no broker), with what delivery's tests ask
// of it in their own words. The test plays the client's fetch loop through eachBatch.
import type { AvroCodec } from '@switchyard/platform/codec/avro-codec';
import type { BatchHandle, RecordBatch } from '@switchyard/platform/consuming/consumer-client';
import { FakeConsumerClient } from '@switchyard/platform/consuming/test-support/fake-consumer-client';
import { createLogger } from '@switchyard/platform/logger';
import { Registry } from '@switchyard/platform/metrics';
import { DeliveryConsumer } from '../delivery-consumer.js';
import { deliveryMetrics } from '../delivery-metrics.js';
import type { TaskRunner } from '../task-runner.js';

/** The delivery topic of the tests. */
export const TOPIC = 'tasks';

/** A batch as the client hands it to the runner, and the handle that comes with it. */
export interface FakeBatch { batch: RecordBatch; handle: BatchHandle }

export class FakeConsumer extends FakeConsumerClient {
  /** The runner's batch handler, as the client's fetch loop calls it (undefined before start). */
  get eachBatch(): ((payload: FakeBatch) => Promise<void>) | undefined {
    const handler = this.run_?.eachBatch;
    return handler && (({ batch, handle }) => handler(batch, handle));
  }

  /** The group assigns these partitions (of TOPIC, or by topic) to `memberId`. */
  join(memberId: string, partitions: number[] | Record<string, number[]>): void {
    this.assign(memberId, Array.isArray(partitions) ? { [TOPIC]: partitions } : partitions);
  }

  get resumed(): FakeConsumerClient['resumes'] {
    return this.resumes;
  }
}

export function deferred<T>() {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => { resolve = r; });
  return { promise, resolve };
}

/** A silent logger for the code under test. */
export const silentLogger = () => createLogger({ service: 'test', level: 'silent' });

/** Delivery's metrics in a registry of their own. */
export const testMetrics = () => deliveryMetrics(new Registry(), { retryTiers: 1 });

/** A DeliveryConsumer over the fake consumer with a test's limits; the rest as every test has it. */
export function deliveryOver(consumer: FakeConsumer, codec: AvroCodec, runner: TaskRunner, limits: { maxInFlight: number; maxInFlightPerDestination: number; maxWaitingPerDestination: number; handOverMs?: number }, groupOffsets?: () => Promise<Map<string, bigint>>): DeliveryConsumer {
  return new DeliveryConsumer({
    client: consumer, codec, runner, topics: [TOPIC], deliveryTopic: TOPIC, readRange: async () => [], metrics: testMetrics(),
    logger: silentLogger(), clock: Date.now, ...limits, commitIntervalMs: 20,
    setAside: async () => undefined, ...(groupOffsets ? { groupOffsets } : {}),
  });
}

/** A batch of these records of a partition as the client hands it over; `resolved` collects what the handler resolved. */
export function recordsOf(topic: string, partition: number, records: Array<{ offset: string; value: Buffer | null }>, resolved: string[] = []): FakeBatch {
  const last = records.at(-1)?.offset ?? '0';
  return {
    batch: {
      topic, partition, messages: records.map((r) => ({ key: null, timestamp: '0', ...r })),
      highWatermark: String(BigInt(last) + 1n), lastOffset: () => last, offsetLag: () => '0',
    },
    handle: { current: () => true, heartbeat: async () => undefined, resolveOffset: (offset) => { resolved.push(offset); } },
  };
}

/** One batch of partition 0 of TOPIC, records at these offsets, and the offsets the handler resolved. */
export function batchOf(offsets: string[]) {
  const resolved: string[] = [];
  const payload = recordsOf(TOPIC, 0, offsets.map((offset) => ({ offset, value: Buffer.from('x') })), resolved);
  return { payload, resolved };
}
