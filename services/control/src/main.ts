// The control service: the admin HTTP API over sources, write keys and webhooks destinations,
// stored in the compacted config topic. Composition root: the only place that reads the environment.
import { z } from 'zod';
import { loadConfig, commonEnv, env, topicEnv } from '@switchyard/platform/config';
import { retryPolicyLimits } from '@switchyard/platform/destination-retry';
import { ConfigView } from '@switchyard/platform/config-view/config-view';
import { AddressPolicy } from '@switchyard/platform/net/address-policy';
import { connectPipeline } from '@switchyard/platform/pipeline';
import { kafkajsConsumer } from '@switchyard/platform/kafka/kafkajs-consumer';
import { originHeaders } from '@switchyard/platform/kafka/record-origin';
import { createRuntime, runMain } from '@switchyard/platform/runtime';
import { destinationSchemas } from './api-schemas.js';
import { registerAdminApi } from './app.js';
import { AuthFailureLimiter } from './auth-failure-limiter.js';
import { ConfigStore } from './config-store.js';
import { applySeed, readSeed } from './seed.js';
import type { Delete, DeliveryTask } from '@switchyard/platform/schemas/generated';
import { DeadLetterIndex } from './dead-letter-index.js';
import { MessageTraceIndex } from './message-trace-index.js';
import { UsageIndex } from './usage-index.js';
import { ReplayIndex } from './replay-index.js';
import { LiveTail } from './live-tail.js';
import { notificationEndpointSchema } from './notification-endpoints.js';
import { Notifier, notifierMetrics } from './notifier.js';
import { followDestinationStates } from '@switchyard/platform/holds/destination-states';
import { registerIndexMetrics } from './index-metrics.js';
import { adminErrors } from './admin-errors.js';
import { adminMetrics } from './admin-metrics.js';

const configSchema = z.object({
  ...commonEnv,
  CONTROL_PORT: env.port(8081),
  SWITCHYARD_ADMIN_TOKEN: z.string().min(16, 'the admin token must be at least 16 characters'),
  SWITCHYARD_ALLOWED_CIDRS: env.cidrs(),
  SWITCHYARD_SEED_FILE: z.string().optional(),
  /** The tier topics' delays: a destination's own retry tiers must lie within them. */
  SWITCHYARD_RETRY_TIERS: topicEnv.SWITCHYARD_RETRY_TIERS,
  /** Dead letters kept in memory for listing and replay (the topic keeps 30 days regardless). */
  DEAD_LETTER_INDEX_MAX: z.coerce.number().int().min(1).default(100_000),
  /** Messages the trace index keeps in memory (about 1.2 KB each with one destination and one attempt; docs/admin-api.md, "Message trace and usage"). */
  CONTROL_TRACE_INDEX_MAX: z.coerce.number().int().min(1).default(100_000),
  /** How far back the trace index reaches (read again on start; the topic keeps 7 days). */
  CONTROL_TRACE_WINDOW: env.duration('24h'),
  /** Failed admin API authentications an address may make per window before it is answered 429 (docs/admin-api.md, "Tokens and scopes"). */
  CONTROL_AUTH_FAILURE_LIMIT: z.coerce.number().int().min(1).default(10),
  CONTROL_AUTH_FAILURE_WINDOW: env.duration('1m').refine((ms) => ms > 0, 'must be longer than 0'),
  /** Whose X-Forwarded-For names the client address the failure limit counts by (as INGEST_TRUST_PROXY). */
  CONTROL_TRUST_PROXY: env.trustProxy(),
  /** A destination every attempt of which failed this long is disabled (docs/decisions/0019-auto-disable-and-notifications.md). */
  SWITCHYARD_DISABLE_AFTER: env.duration('5d').refine((ms) => ms > 0, 'must be longer than 0'),
});

runMain('control', async () => {
  const config = loadConfig(configSchema);
  const runtime = createRuntime({ service: 'control', logLevel: config.LOG_LEVEL, server: { trustProxy: config.CONTROL_TRUST_PROXY as boolean | string[], errors: adminErrors } });
  const { kafka, producer, codec, topics } = await connectPipeline(runtime, config, ['io.switchyard.config.Source', 'io.switchyard.config.Destination', 'io.switchyard.config.Audience', 'io.switchyard.config.ComputedTrait', 'io.switchyard.config.AdminToken', 'io.switchyard.event.Delete', 'io.switchyard.pipeline.DeliveryTask', 'io.switchyard.pipeline.Replay', 'io.switchyard.pipeline.ReplayProgress']);
  const startedAt = Date.now();

  const view = new ConfigView({ kafka, codec, topic: topics.config, logger: runtime.logger, owner: 'control' });
  const writeTasks = async (tasks: DeliveryTask[]): Promise<void> => {
    if (tasks.length === 0) return;
    await producer.send({ topic: topics.delivery, acks: -1, messages: tasks.map((t) => ({ key: `${t.destinationId}:${t.userKey}`, value: codec.encode('io.switchyard.pipeline.DeliveryTask', t) })) });
  };
  const store = new ConfigStore({ producer, codec, topic: topics.config, view });
  // Disables failing destinations and notifies; it acts only once the config view has loaded (below).
  let notifier: Notifier | undefined;
  const notifierLog = runtime.logger.child({ component: 'notifier' });
  const deadLetters = new DeadLetterIndex({ kafka, codec, topic: topics.deadLetter, logger: runtime.logger, max: config.DEAD_LETTER_INDEX_MAX, onLetter: (l) => notifier?.onDeadLetter(l) });
  const traces = new MessageTraceIndex({ kafka, codec, topic: topics.deliveryAttempts, logger: runtime.logger, max: config.CONTROL_TRACE_INDEX_MAX, windowMs: config.CONTROL_TRACE_WINDOW, clock: Date.now });
  const usage = new UsageIndex({ kafka, codec, topic: topics.usage, logger: runtime.logger });
  const replays = new ReplayIndex({ kafka, codec, topic: topics.replays, logger: runtime.logger, producer, onProgress: (r, p) => void notifier?.onReplayProgress(r, p) });
  registerIndexMetrics(runtime.metrics, () => ({ traces: { size: traces.traces.size, max: traces.max }, deadLetters, usage: usage.totals }));
  // Reads the ingest topic only while a debugger viewer is connected.
  const live = new LiveTail({ newConsumer: (groupId) => kafkajsConsumer(kafka, { groupId, maxWaitTimeInMs: 250 }, runtime.logger), codec, topic: topics.ingest, logger: runtime.logger, metrics: runtime.metrics });
  runtime.readiness.set('config', false);
  const policy = new AddressPolicy(config.SWITCHYARD_ALLOWED_CIDRS);
  const deps = {
    view,
    store,
    clock: Date.now,
    destinationSchemas: destinationSchemas(policy, retryPolicyLimits(config.SWITCHYARD_RETRY_TIERS)),
    notificationEndpointSchema: notificationEndpointSchema(policy),
    events: {
      // Keyed like every ingest record (source and user), so a user's delete follows their calls;
      // marked as control's, so fan-out does not take it for a direct record to check and count.
      writeDeletes: async (events: Delete[]) => {
        if (events.length === 0) return;
        await producer.send({ topic: topics.ingest, acks: -1, messages: events.map((e) => ({ key: `${e.sourceId}:${e.userId}`, value: codec.encode('io.switchyard.event.Delete', e), headers: originHeaders.control })) });
      },
      writeTasks,
    },
    deadLetters,
    traces,
    usage: usage.totals,
    live,
    replays,
    metrics: adminMetrics(runtime.metrics),
  };
  const limiter = new AuthFailureLimiter({ limit: config.CONTROL_AUTH_FAILURE_LIMIT, windowMs: config.CONTROL_AUTH_FAILURE_WINDOW });
  registerAdminApi(runtime.server, deps, { adminToken: config.SWITCHYARD_ADMIN_TOKEN, limiter });
  await runtime.listen(config.HOST, config.CONTROL_PORT);
  // Registered after listen, so it runs before the server closes: open streams end first.
  runtime.lifecycle.onShutdown('live-tail', () => live.stop());
  await view.start();
  runtime.lifecycle.onShutdown('config-view', () => view.stop());
  notifier = new Notifier({ view, store, writeTasks, clock: Date.now, logger: notifierLog, metrics: notifierMetrics(runtime.metrics, view), disableAfterMs: config.SWITCHYARD_DISABLE_AFTER, startedAt });
  const active = notifier;
  const healthFollower = await followDestinationStates({ kafka, codec, topic: topics.destinationState, logger: runtime.logger, onHealth: (h) => void active.onHealth(h) });
  runtime.lifecycle.onShutdown('destination-health', () => healthFollower.stop());
  const ticks = setInterval(() => void active.tick(), 5_000).unref();
  runtime.lifecycle.onShutdown('notifier', () => clearInterval(ticks));
  // Side by side, starting and stopping: each stop of an idle follower waits for its fetch in
  // flight (up to 2 s, kafkajs/idle-fetch-wait.ts). A stop before its start has nothing to close.
  const indexes = [deadLetters, traces, usage, replays];
  runtime.lifecycle.onShutdown('indexes', async () => { await Promise.all(indexes.map((x) => x.stop())); });
  await Promise.all(indexes.map((x) => x.start()));

  if (config.SWITCHYARD_SEED_FILE) {
    const result = await applySeed(readSeed(config.SWITCHYARD_SEED_FILE, process.env), deps);
    runtime.logger.info({ file: config.SWITCHYARD_SEED_FILE, ...result }, 'seed applied');
  }
  runtime.readiness.set('config', true);
});
