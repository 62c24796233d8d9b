// The fan-out service: reads the ingest topic and writes one delivery task per (event, enabled
// webhooks destination), exactly once, through Kafka transactions.
// Composition root: the only place that reads the environment and wires I/O.
import { z } from 'zod';
import { loadConfig, commonEnv, env, retryEnv } from '@switchyard/platform/config';
import { DestinationStates, followDestinationStates } from '@switchyard/platform/holds/destination-states';
import { validateRetryPolicy } from '@switchyard/platform/retry-schedule';
import { partitionCounts } from '@switchyard/platform/kafka/admin';
import type { TopicNames } from '@switchyard/platform/kafka/topics';
import type { ConfigState } from '@switchyard/platform/config-view/config-state';
import { STAGE_FETCH, type Kafka } from '@switchyard/platform/kafka/client';
import { kafkajsConsumer } from '@switchyard/platform/kafka/kafkajs-consumer';
import { groupIds } from '@switchyard/platform/kafka/groups';
import { GroupOffsetCommitter } from '@switchyard/platform/exactly-once/group-offset-committer';
import { connectClient, trackGroupMembership } from '@switchyard/platform/kafka/connect';
import { connectPipeline, startConfigView, startPartitionTransactions } from '@switchyard/platform/pipeline';
import { createRuntime, runMain } from '@switchyard/platform/runtime';
import { UsageRecorder } from '@switchyard/platform/usage/usage-recorder';
import { fanoutRunner, runFanout } from './fanout-consumer.js';
import { mayHold } from './held-ranges.js';
import { ReplayRunner } from './replay-runner.js';
import { fanoutMetrics } from './fanout-metrics.js';
import type { PartitionLayout } from './task-partitions.js';

const configSchema = z.object({
  ...commonEnv,
  FANOUT_PORT: env.port(8082),
  /** One trace record per event on the delivery-attempts topic (the trace API); off only to measure its cost. */
  FANOUT_RECORD_TRACE: z.enum(['true', 'false']).default('true').transform((v) => v === 'true'),
  /** How often usage totals (calls filtered by integrations; direct records accepted and rejected) are written: what a crash can lose at most. */
  SWITCHYARD_USAGE_INTERVAL: env.duration('5s'),
  /** The most ingest records per second any replay reads (docs/delivery.md, "Replays of a time range"): live traffic keeps priority. */
  FANOUT_REPLAY_MAX_RATE: z.coerce.number().int().min(1).max(1_000_000).default(2000),
  /** The retry policy, as delivery's: a held range is written due like delivery's first deferral. */
  ...retryEnv,
  /** Hold the tasks of destinations delivery reports refusing (one range record per batch instead); false writes every task. */
  FANOUT_HOLD_REFUSING: z.enum(['true', 'false']).default('true').transform((v) => v === 'true'),
  /** Which destinations' and sources' metrics carry their id: none, top:N (the rest in "_other") or all. */
  SWITCHYARD_METRICS_DESTINATIONS: env.labelBound(),
  SWITCHYARD_METRICS_SOURCES: env.labelBound(),
});

/** How often the group's offsets catch up with the positions committed in the transactions. */
const GROUP_OFFSET_INTERVAL_MS = 1000;

runMain('fanout', async () => {
  const config = loadConfig(configSchema);
  const runtime = createRuntime({ service: 'fanout', logLevel: config.LOG_LEVEL });
  await runtime.listen(config.HOST, config.FANOUT_PORT);
  const groupId = groupIds(config.SWITCHYARD_TOPIC_PREFIX).fanout;
  const clients = await connectPipeline(runtime, config, [
    'io.switchyard.pipeline.DeliveryTask', 'io.switchyard.pipeline.InvalidEvent', 'io.switchyard.pipeline.TraceRecords', 'io.switchyard.pipeline.UsageCount',
    'io.switchyard.pipeline.Replay', 'io.switchyard.pipeline.ReplayProgress', 'io.switchyard.pipeline.DeferredRange', 'io.switchyard.pipeline.DestinationState',
    'io.switchyard.pipeline.ConsumedPosition',
  ]);
  const { kafka, producer, codec, topics } = clients;
  // Ids stay shown until the configuration is read; then a deleted destination's or source's series go.
  let configured: Pick<ConfigState, 'destination' | 'source'> | undefined;
  const metrics = fanoutMetrics(runtime.metrics, { bound: config.SWITCHYARD_METRICS_DESTINATIONS, exists: (id) => !configured || configured.destination(id) !== undefined });
  // A short session lets a replacement take over a crashed instance's partitions within seconds.
  // Fetches return as soon as records exist (STAGE_FETCH). Connected once everything else is ready.
  const client = kafkajsConsumer(kafka, { groupId, sessionTimeout: 10_000, heartbeatInterval: 1000, ...STAGE_FETCH }, runtime.logger);
  // Tasks go out in transactions, one transactional id per ingest partition (fencing across
  // rebalances), each with the partition's position as a record of its own: the group's offsets
  // follow every second, for lag.
  const groupOffsets = new GroupOffsetCommitter({ topic: topics.ingest, commit: (offsets) => client.commit(offsets), intervalMs: GROUP_OFFSET_INTERVAL_MS, logger: runtime.logger });
  const transactions = await startPartitionTransactions(runtime, config, {
    stage: 'fanout', prefix: config.SWITCHYARD_TOPIC_PREFIX, groupId, topic: topics.ingest, onFence: () => metrics.fenced.inc(),
    positions: { topic: topics.fanoutPositions, codec, groupOffsets },
  });
  // Usage totals go outside the transactions, from the plain producer, every interval.
  const usage = new UsageRecorder({
    service: 'fanout', producer, codec, topic: topics.usage, registry: runtime.metrics, logger: runtime.logger, intervalMs: config.SWITCHYARD_USAGE_INTERVAL,
    sources: { bound: config.SWITCHYARD_METRICS_SOURCES, exists: (id) => !configured || configured.source(id) !== undefined },
  });
  usage.start();
  runtime.lifecycle.onShutdown('usage', () => usage.close());
  const view = await startConfigView(runtime, clients);
  configured = view.state;
  // Destinations delivery finds refusing: their tasks are held rather than written (held-ranges.ts).
  const policy = validateRetryPolicy({ tiersMs: config.SWITCHYARD_RETRY_TIERS, deadlineMs: config.SWITCHYARD_RETRY_DEADLINE });
  let holds: { states: DestinationStates; policy: typeof policy } | undefined;
  if (config.FANOUT_HOLD_REFUSING && mayHold(policy)) {
    const states = new DestinationStates();
    const follower = await followDestinationStates({ kafka, codec, topic: topics.destinationState, logger: runtime.logger, states });
    runtime.lifecycle.onShutdown('destination-states', () => follower.stop());
    holds = { states, policy };
  }
  const layout = await readPartitionLayout(kafka, topics);
  runtime.logger.info(layout, 'partitions: ingest and delivery');
  // Replays of a time range into one destination: run by whichever instance owns the replays topic.
  const replays = new ReplayRunner({ kafka, codec, config: view.state, topics, logger: runtime.logger, clock: Date.now, prefix: config.SWITCHYARD_TOPIC_PREFIX, maxRate: config.FANOUT_REPLAY_MAX_RATE });
  await replays.start();
  runtime.lifecycle.onShutdown('replays', () => replays.stop());

  const runner = fanoutRunner(client, { transactions, topics, logger: runtime.logger });
  // Connected here for readiness (the runner's connect is answered by this one); shutdown stops
  // through the runner, which then disconnects the client.
  await connectClient(runtime.lifecycle, 'consumer', { connect: () => client.connect(), disconnect: () => runner.stop() });
  // Shutdown runs in reverse: the last group offsets go before the consumer leaves its group.
  groupOffsets.start();
  runtime.lifecycle.onShutdown('group-offsets', () => groupOffsets.stop());
  trackGroupMembership(runtime.lifecycle, client);
  client.on('crashed', (err, restart) => runtime.logger.error({ err, restart }, 'consumer crashed'));
  // Partitions may have moved: lag is reported again for the ones this instance now owns.
  client.on('assigned', () => metrics.lag.reset());
  await runFanout(runner, {
    transactions, codec, config: view.state, topics, metrics, logger: runtime.logger, clock: Date.now,
    layout, recordTrace: config.FANOUT_RECORD_TRACE, ...(holds ? { holds } : {}), countUsage: (sourceId, receivedAt, outcome, n, reason) => usage.count(sourceId, receivedAt, outcome, n, reason),
  });
});

/**
 * The ingest and delivery topics' partition counts (setup created both). Read once: partitions added
 * later are used after a restart, and until then every task still goes to a partition that exists.
 * The positions topic needs a partition per ingest partition (setup grows them together).
 */
async function readPartitionLayout(kafka: Kafka, topics: TopicNames): Promise<PartitionLayout> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    const counts = await partitionCounts(admin, [topics.ingest, topics.delivery, topics.fanoutPositions]);
    const count = (topic: string) => {
      const n = counts.get(topic);
      if (!n) throw new Error(`topic ${topic} has no partitions: run setup first`);
      return n;
    };
    const layout = { ingest: count(topics.ingest), delivery: count(topics.delivery) };
    if (count(topics.fanoutPositions) < layout.ingest) throw new Error(`topic ${topics.fanoutPositions} has fewer partitions than ${topics.ingest}: run setup`);
    return layout;
  } finally {
    await admin.disconnect().catch(() => undefined);
  }
}
