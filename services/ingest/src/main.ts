// The ingest service: the tracking HTTP API that analytics client libraries speak, writing each
// accepted call to the ingest topic as Avro. Composition root: the only place that reads the environment.
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { loadConfig, commonEnv, env } from '@switchyard/platform/config';
import { ConfigView } from '@switchyard/platform/config-view/config-view';
import { BatchingProducer } from '@switchyard/platform/kafka/batching-producer';
import { connectPipeline } from '@switchyard/platform/pipeline';
import { createRuntime, runMain } from '@switchyard/platform/runtime';
import { UsageRecorder } from '@switchyard/platform/usage/usage-recorder';
import { browserEndpoint, defaultPublicUrl } from './browser-settings.js';
import { ingestMetrics } from './ingest-metrics.js';
import { MAX_WRITE_BYTES } from './request-body.js';
import { trackingApi } from './routes.js';
import { trackingErrors } from './tracking-errors.js';

const configSchema = z.object({
  ...commonEnv,
  INGEST_PORT: env.port(8080),
  INGEST_ACK_TIMEOUT: env.duration('10s'),
  /** How often usage totals (calls per source per day) are written: what a crash can lose at most. */
  SWITCHYARD_USAGE_INTERVAL: env.duration('5s'),
  /** Which sources' usage metrics carry their id: none, top:N (the rest in source="_other") or all. */
  SWITCHYARD_METRICS_SOURCES: env.labelBound(),
  /** Whose X-Forwarded-For to believe for context.ip: false, true, a hop count, or comma-separated addresses/CIDRs. */
  INGEST_TRUST_PROXY: env.trustProxy(),
  /**
   * The URL browsers reach this service at (scheme, host, port, optional path prefix): the
   * analytics.js settings send every call there. Default: the listen address.
   */
  INGEST_PUBLIC_URL: z.string().optional().superRefine((v, ctx) => {
    if (v === undefined) return;
    try { browserEndpoint(v); } catch (err) { ctx.addIssue({ code: 'custom', message: (err as Error).message }); }
  }),
});

runMain('ingest', async () => {
  const config = loadConfig(configSchema);
  const runtime = createRuntime({
    service: 'ingest', logLevel: config.LOG_LEVEL,
    server: { trustProxy: config.INGEST_TRUST_PROXY as boolean | string[], errors: trackingErrors },
  });
  const { kafka, producer, codec, topics } = await connectPipeline(runtime, config, [
    'io.switchyard.event.Track', 'io.switchyard.event.Page', 'io.switchyard.event.Screen', 'io.switchyard.event.Identify',
    'io.switchyard.event.Group', 'io.switchyard.event.Alias', 'io.switchyard.pipeline.InvalidEvent', 'io.switchyard.pipeline.UsageCount',
  ]);
  const view = new ConfigView({ kafka, codec, topic: topics.config, logger: runtime.logger, owner: 'ingest' });
  const metrics = ingestMetrics(runtime.metrics);
  const batcher = new BatchingProducer(producer, {
    // One request writes at most this much, and sends stay under the broker's 1 MiB record batch.
    maxBatchBytes: MAX_WRITE_BYTES,
    onSend: ({ records, seconds, error }) => {
      if (error) runtime.logger.warn({ err: error, records }, 'produce failed');
      else { metrics.kafkaAck.observe(seconds); metrics.kafkaBatchRecords.observe(records); }
    },
  });
  // Registered before the server's close, so it runs after it: the last requests are counted.
  const usage = new UsageRecorder({
    service: 'ingest', producer, codec, topic: topics.usage, registry: runtime.metrics, logger: runtime.logger, intervalMs: config.SWITCHYARD_USAGE_INTERVAL,
    sources: { bound: config.SWITCHYARD_METRICS_SOURCES, exists: (id) => view.state.source(id) !== undefined },
  });
  usage.start();
  runtime.lifecycle.onShutdown('usage', () => usage.close());
  let configLoaded = false;
  const publicUrl = config.INGEST_PUBLIC_URL ?? defaultPublicUrl(config.HOST, config.INGEST_PORT);
  runtime.logger.info({ publicUrl, configured: config.INGEST_PUBLIC_URL !== undefined }, 'analytics.js settings send browsers to this URL (INGEST_PUBLIC_URL)');
  await trackingApi(runtime.server, {
    browser: browserEndpoint(publicUrl),
    config: view.state, codec, batcher, topics, metrics, clock: Date.now, newMessageId: randomUUID, ackTimeoutMs: config.INGEST_ACK_TIMEOUT,
    countUsage: (sourceId, at, outcome, n) => usage.count(sourceId, at, outcome, n),
    configLoaded: () => configLoaded,
    configCurrent: (since, timeoutMs) => view.whenCurrent(since, timeoutMs),
  });
  runtime.readiness.set('config', false);
  await runtime.listen(config.HOST, config.INGEST_PORT);
  await view.start();
  runtime.lifecycle.onShutdown('config-view', () => view.stop());
  configLoaded = true;
  runtime.readiness.set('config', true);
});
