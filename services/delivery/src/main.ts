// The delivery service: reads delivery tasks (and the retry tiers) and POSTs each, signed, to its
// destination's webhooks; failures go through the retry tiers to the 4-hour deadline, then to the
// dead-letter topic. Composition root: the only place that reads the environment and wires I/O.
import { hostname } from 'node:os';
import { z } from 'zod';
import { loadConfig, commonEnv, env, retryEnv } from '@switchyard/platform/config';
import { unreadableRecord } from '@switchyard/platform/codec/invalid-event';
import { DestinationStates, followDestinationStates, healthKey } from '@switchyard/platform/holds/destination-states';
import { BatchingProducer } from '@switchyard/platform/kafka/batching-producer';
import { STAGE_FETCH } from '@switchyard/platform/kafka/client';
import { kafkajsConsumer } from '@switchyard/platform/kafka/kafkajs-consumer';
import { groupIds } from '@switchyard/platform/kafka/groups';
import { connectClient, trackGroupMembership } from '@switchyard/platform/kafka/connect';
import { kafkajsPartitionSource } from '@switchyard/platform/kafka/kafkajs-partition-source';
import { committedOffsets } from '@switchyard/platform/exactly-once/partition-transactions';
import { readPartitionRange } from '@switchyard/platform/kafka/partition-range';
import { AddressPolicy } from '@switchyard/platform/net/address-policy';
import { connectPipeline, startConfigView, type PipelineClients } from '@switchyard/platform/pipeline';
import { validateRetryPolicy } from '@switchyard/platform/retry-schedule';
import { createRuntime, runMain, type ServiceRuntime } from '@switchyard/platform/runtime';
import { CircuitBreaker } from './circuit-breaker.js';
import { DeliveryConsumer } from './delivery-consumer.js';
import { deliveryMetrics, type DeliveryMetrics } from './delivery-metrics.js';
import { FailedAttemptLog } from './failed-attempt-log.js';
import { startAttemptRecorder } from './attempt-recorder.js';
import { HealthPublisher } from './health-publisher.js';
import { RefusalPublisher } from './refusal-publisher.js';
import { TaskRunner } from './task-runner.js';
import { WebhookClient } from './webhook-client.js';

const DELIVERY_FETCH_BYTES_PER_PARTITION = 64 * 1024;
/**
 * How long a fetch waits at the broker for records, and how long kafkajs sleeps when every
 * partition is paused. A paused partition that is resumed (its destination drained, its tier record
 * fell due) is fetched only after that wait: with STAGE_FETCH's 100 ms, one fast destination's
 * queue filled, every partition paused, drained in 20 ms and sat idle for the rest, and delivery
 * drained 6 000 tasks/s on a third of a core. Idle, a consumer would make 50 empty fetches a
 * second; after a second of empty fetches it waits 2 s instead (kafkajs/idle-fetch-wait.ts).
 */
const DELIVERY_FETCH_WAIT_MS = 20;

const configSchema = z.object({
  ...commonEnv,
  ...retryEnv,
  DELIVERY_PORT: env.port(8083),
  SWITCHYARD_ALLOWED_CIDRS: env.cidrs(),
  DELIVERY_TIMEOUT: env.duration('5s'),
  /** The product token of the User-Agent header; `/1.0` is appended. */
  DELIVERY_USER_AGENT: z.string().regex(/^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/, 'an HTTP token').default('Switchyard'),
  DELIVERY_MAX_IN_FLIGHT: z.coerce.number().int().min(1).default(1000),
  DELIVERY_MAX_IN_FLIGHT_PER_DESTINATION: z.coerce.number().int().min(1).default(200),
  DELIVERY_MAX_WAITING_PER_DESTINATION: z.coerce.number().int().min(0).default(400),
  DELIVERY_BREAKER_THRESHOLD: z.coerce.number().int().min(1).default(5),
  DELIVERY_BREAKER_OPEN: env.duration('30s'),
  /** Least time between offset commits; a commit follows each completion otherwise (what a crash re-delivers). */
  DELIVERY_COMMIT_INTERVAL: env.duration('20ms'),
  /** Record every attempt on the delivery-attempts topic (the trace API); off only to measure its cost. */
  DELIVERY_RECORD_ATTEMPTS: z.enum(['true', 'false']).default('true').transform((v) => v === 'true'),
  /**
   * What this instance reads: `all` (the delivery topic and every retry tier, one group), or split
   * into `main` (the delivery topic, group <prefix>delivery) and `retries` (the tiers, group
   * <prefix>delivery-retries) to scale them apart. Never run `all` beside `retries`: both groups
   * would read the tiers, and every retried task would be delivered twice.
   */
  DELIVERY_READS: z.enum(['all', 'main', 'retries']).default('all'),
  /** Which destinations' metrics carry their id: none, top:N (the rest in destination="_other") or all. */
  SWITCHYARD_METRICS_DESTINATIONS: env.labelBound(),
});

type DeliveryConfig = z.infer<typeof configSchema>;

/** What the consumer is built from: the task runner and what it writes with, and whether shutdown began. */
interface RunnerParts {
  runner: TaskRunner;
  batcher: BatchingProducer;
  metrics: DeliveryMetrics;
  stopping: () => boolean;
}

runMain('delivery', async () => {
  const config = loadConfig(configSchema);
  const runtime = createRuntime({ service: 'delivery', logLevel: config.LOG_LEVEL });
  await runtime.listen(config.HOST, config.DELIVERY_PORT);
  const clients = await connectPipeline(runtime, config, [
    'io.switchyard.pipeline.DeliveryTask', 'io.switchyard.pipeline.DeferredRange', 'io.switchyard.pipeline.DeadLetter', 'io.switchyard.pipeline.InvalidEvent', 'io.switchyard.pipeline.TraceRecords',
    'io.switchyard.pipeline.DestinationState', 'io.switchyard.pipeline.DestinationHealth',
  ]);
  let stopping = false;
  const parts = await startTaskRunner(runtime, clients, config, () => stopping);
  const delivery = await deliveryConsumer(runtime, clients, config, parts);
  // Registered after the consumer's disconnect, so it runs before it: stop reading, drain, commit.
  runtime.lifecycle.onShutdown('delivery', async () => { await delivery.stop(); stopping = true; });
  await delivery.start();
});

/**
 * The task runner and everything one attempt touches: the config view, the webhook client, the
 * circuit breaker, the attempt recorder, and the destination-state reports (refusing destinations
 * for fan-out, failing clocks for control).
 */
async function startTaskRunner(runtime: ServiceRuntime, clients: PipelineClients, config: DeliveryConfig, stopping: () => boolean): Promise<RunnerParts> {
  const { kafka, producer, codec, topics } = clients;
  const view = await startConfigView(runtime, clients);
  const metrics = deliveryMetrics(runtime.metrics, { retryTiers: config.SWITCHYARD_RETRY_TIERS.length }, {
    bound: config.SWITCHYARD_METRICS_DESTINATIONS, exists: (id) => view.state.destination(id) !== undefined,
  });
  const client = new WebhookClient({ policy: new AddressPolicy(config.SWITCHYARD_ALLOWED_CIDRS), timeoutMs: config.DELIVERY_TIMEOUT, userAgent: `${config.DELIVERY_USER_AGENT}/1.0` });
  runtime.lifecycle.onShutdown('webhook-client', () => client.close());
  const batcher = new BatchingProducer(producer);
  const recordAttempt = config.DELIVERY_RECORD_ATTEMPTS ? await startAttemptRecorder(runtime, kafka, codec, topics.deliveryAttempts, metrics) : undefined;
  const failures = new FailedAttemptLog({ logger: runtime.logger, clock: Date.now });
  const sweep = setInterval(() => failures.sweep(), 10_000).unref();
  runtime.lifecycle.onShutdown('failed-attempt-log', () => { clearInterval(sweep); failures.flush(); });
  // Destinations refusing every request are reported to fan-out, which then holds their tasks.
  // And each destination's failing clock, which control disables failing destinations by.
  const writer = `${hostname()}-${process.pid}`;
  const health = new HealthPublisher({
    writer, clock: Date.now, logger: runtime.logger,
    write: (h) => batcher.submit([{ topic: topics.destinationState, key: healthKey(h.destinationId), value: codec.encode('io.switchyard.pipeline.DestinationHealth', h) }]).acked,
  });
  const states = new DestinationStates();
  const stateFollower = await followDestinationStates({ kafka, codec, topic: topics.destinationState, logger: runtime.logger, states, onHealth: (h) => health.apply(h) });
  runtime.lifecycle.onShutdown('destination-states', () => stateFollower.stop());
  const refusals = new RefusalPublisher({
    states, writer, clock: Date.now, logger: runtime.logger,
    write: (state) => batcher.submit([{ topic: topics.destinationState, key: state.destinationId, value: codec.encode('io.switchyard.pipeline.DestinationState', state) }]).acked,
  });
  const runner = new TaskRunner({
    config: view.state, client, codec, producer: batcher, topics, metrics, logger: runtime.logger, clock: Date.now,
    breaker: new CircuitBreaker({ failureThreshold: config.DELIVERY_BREAKER_THRESHOLD, openMs: config.DELIVERY_BREAKER_OPEN, now: Date.now }),
    policy: validateRetryPolicy({ tiersMs: config.SWITCHYARD_RETRY_TIERS, deadlineMs: config.SWITCHYARD_RETRY_DEADLINE }),
    stopping, recordAttempt, failures, refusals, health,
  });
  return { runner, batcher, metrics, stopping };
}

/** The consumer group over the delivery topic and the retry tiers (DELIVERY_READS). */
async function deliveryConsumer(runtime: ServiceRuntime, clients: PipelineClients, config: DeliveryConfig, { runner, batcher, metrics, stopping }: RunnerParts): Promise<DeliveryConsumer> {
  const { kafka, codec, topics } = clients;
  // Short sessions: a replacement takes over a crashed instance's partitions within seconds.
  // Fetches return as soon as records exist (STAGE_FETCH): a task is dispatched as soon as it is
  // committed upstream, and a partition resumed is read within DELIVERY_FETCH_WAIT_MS.
  const groups = groupIds(config.SWITCHYARD_TOPIC_PREFIX);
  const groupId = config.DELIVERY_READS === 'retries' ? groups.deliveryRetries : groups.delivery;
  const tierTopics = config.SWITCHYARD_RETRY_TIERS.map((_, i) => topics.retry(i + 1));
  // Fetches are small (64 KB a partition, a few hundred tasks): a destination whose queue is full
  // seeks its partition back, and kafkajs decodes every record of a fetch whether it is used or not.
  // With 1 MB a busy destination's drain decoded ten records for each one sent; a fetch is a round
  // trip of a millisecond, so small ones cost no throughput.
  const client = kafkajsConsumer(kafka, { groupId, sessionTimeout: 10_000, heartbeatInterval: 1000, ...STAGE_FETCH, maxWaitTimeInMs: DELIVERY_FETCH_WAIT_MS, maxBytesPerPartition: DELIVERY_FETCH_BYTES_PER_PARTITION }, runtime.logger);
  await connectClient(runtime.lifecycle, 'consumer', client);
  trackGroupMembership(runtime.lifecycle, client);
  client.on('crashed', (err, restart) => runtime.logger.error({ err, restart }, 'consumer crashed'));
  const admin = kafka.admin();
  await connectClient(runtime.lifecycle, 'offsets-admin', admin);
  // Deferred ranges are read back straight from the partition leaders: of the delivery topic (ranges
  // deferred here) or of the ingest topic (ranges fan-out held).
  const rangeSources = new Map([topics.delivery, topics.ingest].map((topic) => [topic, kafkajsPartitionSource(kafka, topic)]));
  runtime.lifecycle.onShutdown('range-readers', () => Promise.all([...rangeSources.values()].map((source) => source.close())).then(() => undefined));
  const delivery = new DeliveryConsumer({
    groupOffsets: (topics) => committedOffsets(admin, groupId, topics),
    client, codec, runner, metrics, logger: runtime.logger, clock: Date.now,
    topics: config.DELIVERY_READS === 'main' ? [topics.delivery] : config.DELIVERY_READS === 'retries' ? tierTopics : [topics.delivery, ...tierTopics],
    deliveryTopic: topics.delivery,
    // Every delivery partition counts for the rate limit shares, read here or by the other group.
    rateShareTopics: [topics.delivery, ...tierTopics],
    partitionCounts: async (names) => {
      const { topics: found } = await admin.fetchTopicMetadata({ topics: names });
      return new Map(found.map((t) => [t.name, t.partitions.length]));
    },
    holdMs: config.SWITCHYARD_RETRY_TIERS[0]!,
    readRange: (topic, partition, from, to) => {
      const source = rangeSources.get(topic);
      if (!source) throw new Error(`a deferred range names ${topic}, neither the delivery nor the ingest topic`);
      return readPartitionRange(source, partition, from, to, {
        stopping,
        onRetry: (err) => runtime.logger.warn({ err, topic, partition }, 'reading deferred tasks failed; retrying'),
      });
    },
    maxInFlight: config.DELIVERY_MAX_IN_FLIGHT,
    maxInFlightPerDestination: config.DELIVERY_MAX_IN_FLIGHT_PER_DESTINATION,
    maxWaitingPerDestination: config.DELIVERY_MAX_WAITING_PER_DESTINATION,
    commitIntervalMs: config.DELIVERY_COMMIT_INTERVAL,
    setAside: async (value, topic, partition, offset, reason) => {
      runtime.logger.error({ topic, partition, offset, reason }, 'unreadable delivery task set aside');
      const record = unreadableRecord('delivery', 'undecodable', reason, { value, topic, partition, offset }, Date.now());
      await batcher.submit([{ topic: topics.invalidEvents, key: null, value: codec.encode('io.switchyard.pipeline.InvalidEvent', record) }]).acked;
    },
  });
  return delivery;
}
