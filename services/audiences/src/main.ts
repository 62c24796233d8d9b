// The audiences service: a stateful stream processor over the ingest topic that emits identify
// calls (into the ingest topic, so they are fanned out and delivered like any other) when a user
// enters or leaves an audience or a computed trait changes. Composition root.
import { z } from 'zod';
import { loadConfig, commonEnv, env } from '@switchyard/platform/config';
import { groupIds } from '@switchyard/platform/kafka/groups';
import { connectClient, trackGroupMembership } from '@switchyard/platform/kafka/connect';
import { kafkajsConsumer } from '@switchyard/platform/kafka/kafkajs-consumer';
import { connectPipeline, startConfigView, startPartitionTransactions } from '@switchyard/platform/pipeline';
import { createRuntime, runMain } from '@switchyard/platform/runtime';
import { audienceMetrics } from './audience-metrics.js';
import { AudienceProcessor } from './audience-processor.js';
import { partitionReleased, restorePartition, type ChangelogOptions } from './changelog.js';

const configSchema = z.object({
  ...commonEnv,
  AUDIENCES_PORT: env.port(8084),
  /** How often memberships with time windows are re-evaluated (users whose events aged out leave). */
  AUDIENCES_SYNC_INTERVAL: env.duration('60s'),
  /** Which audiences' and computed traits' metrics carry their id: none, top:N (the rest in "_other") or all. */
  SWITCHYARD_METRICS_AUDIENCES: env.labelBound(),
});

runMain('audiences', async () => {
  const config = loadConfig(configSchema);
  const runtime = createRuntime({ service: 'audiences', logLevel: config.LOG_LEVEL });
  await runtime.listen(config.HOST, config.AUDIENCES_PORT);
  const clients = await connectPipeline(runtime, config, ['io.switchyard.event.Identify', 'io.switchyard.pipeline.AudienceUserState']);
  const { kafka, codec, topics } = clients;
  const view = await startConfigView(runtime, clients);

  const metrics = audienceMetrics(runtime.metrics, {
    bound: config.SWITCHYARD_METRICS_AUDIENCES,
    audienceExists: (id) => view.state.audience(id) !== undefined, traitExists: (id) => view.state.computedTrait(id) !== undefined,
  });
  const groupId = groupIds(config.SWITCHYARD_TOPIC_PREFIX).audiences;
  const client = kafkajsConsumer(kafka, { groupId, sessionTimeout: 10_000, heartbeatInterval: 1000, maxWaitTimeInMs: 500 }, runtime.logger);
  const admin = kafka.admin();
  await connectClient(runtime.lifecycle, 'changelog-admin', admin);
  // State is kept per ingest partition: restored from the changelog when the partition is fenced in
  // (after the previous owner's last transaction ended), forgotten when it is given up.
  // (The callbacks run after a group join, once `processor` below exists.)
  const changelog: ChangelogOptions = {
    newConsumer: (restoreGroup) => kafkajsConsumer(kafka, { groupId: restoreGroup, maxWaitTimeInMs: 200 }, runtime.logger),
    admin, codec, topic: topics.audiencesState, prefix: config.SWITCHYARD_TOPIC_PREFIX, logger: runtime.logger, metrics,
    apply: (key, partition, value) => processor.applyChangelog(key, partition, value),
  };
  const transactions = await startPartitionTransactions(runtime, config, {
    stage: 'audiences', prefix: config.SWITCHYARD_TOPIC_PREFIX, groupId, topic: topics.ingest,
    onAcquired: async (partition) => {
      processor.dropPartition(partition);
      const records = await restorePartition(changelog, partition);
      runtime.logger.info({ partition, records }, 'audience state of the partition restored');
    },
    onReleased: (partition) => { processor.dropPartition(partition); partitionReleased(metrics, partition); },
    onFence: () => metrics.fenced.inc(),
  });
  const processor = new AudienceProcessor({ transactions, codec, config: view.state, topics, metrics, logger: runtime.logger, clock: Date.now });
  processor.markKnownAudiences();

  const runner = processor.runner(client);
  // Connected here for readiness (the runner's connect is answered by this one); shutdown stops
  // through the runner, which then disconnects the client.
  await connectClient(runtime.lifecycle, 'consumer', { connect: () => client.connect(), disconnect: () => runner.stop() });
  trackGroupMembership(runtime.lifecycle, client);
  view.on('change', () => void processor.backfillNewAudiences().catch((err: unknown) => runtime.logger.error({ err }, 'backfill failed')));
  const timer = setInterval(() => void processor.sync().catch((err: unknown) => runtime.logger.error({ err }, 'sync failed')), config.AUDIENCES_SYNC_INTERVAL);
  runtime.lifecycle.onShutdown('sync-timer', () => clearInterval(timer));
  await processor.start(runner);
});
