// The unit tests' stand-in for kafkajs's consumer: just the part DeliveryConsumer and its pieces
// use, recording seeks, resumes and commits; the test plays kafkajs's runner through eachBatch.
import type { AvroCodec } from '@switchyard/platform/codec/avro-codec';
import type { Consumer, EachBatchPayload } from '@switchyard/platform/kafka/client';
import { createLogger } from '@switchyard/platform/logger';
import { Registry } from '@switchyard/platform/metrics';
import { DeliveryConsumer } from '../delivery-consumer.js';
import { deliveryMetrics } from '../delivery-metrics.js';
import type { TaskRunner } from '../task-runner.js';

/** The delivery topic of the tests. */
export const TOPIC = 'tasks';

/** Just the part of a kafkajs consumer DeliveryConsumer uses: the test plays kafkajs's runner. */
export class FakeConsumer {
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
  readonly pauses: unknown[] = [];
  pause(partitions: unknown): void { this.pauses.push(partitions); }
  readonly resumed: unknown[] = [];
  resume(partitions: unknown): void { this.resumed.push(partitions); }
  /** What paused() answers: the partitions a test says kafkajs has paused. */
  pausedNow: Array<{ topic: string; partitions: number[] }> = [];
  paused(): Array<{ topic: string; partitions: number[] }> { return this.pausedNow; }
  readonly commits: Array<Array<{ topic: string; partition: number; offset: string }>> = [];
  async commitOffsets(offsets: Array<{ topic: string; partition: number; offset: string }>): Promise<void> { this.commits.push(offsets); }
  async stop(): Promise<void> {}
}

/** The fake typed as the kafkajs consumer the code under test takes. */
export const asConsumer = (consumer: FakeConsumer): Consumer => consumer as unknown as Consumer;

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
export function deliveryOver(consumer: FakeConsumer, codec: AvroCodec, runner: TaskRunner, limits: { maxInFlight: number; maxInFlightPerDestination: number; maxWaitingPerDestination: number }, groupOffsets?: () => Promise<Map<string, bigint>>): DeliveryConsumer {
  return new DeliveryConsumer({
    consumer: asConsumer(consumer), codec, runner, topics: [TOPIC], deliveryTopic: TOPIC, readRange: async () => [], metrics: testMetrics(),
    logger: silentLogger(), clock: Date.now, ...limits, commitIntervalMs: 20,
    setAside: async () => undefined, ...(groupOffsets ? { groupOffsets } : {}),
  });
}

/** One batch of partition 0 as kafkajs hands it over, and the offsets the handler resolved. */
export function batchOf(offsets: string[]) {
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
