// The admin API as the service serves it (the server, its error catalogue, every route), over a
// configuration that starts empty and indexes that were never started: no Kafka, no registry.
import type { FastifyInstance } from 'fastify';
import type { AvroCodec } from '@switchyard/platform/codec/avro-codec';
import type { ConsumerClient } from '@switchyard/platform/consuming/consumer-client';
import { ConfigView } from '@switchyard/platform/config-view/config-view';
import { retryPolicyLimits } from '@switchyard/platform/destination-retry';
import { createServer } from '@switchyard/platform/http/server';
import type { Kafka, Producer } from '@switchyard/platform/kafka/client';
import { Lifecycle } from '@switchyard/platform/lifecycle';
import { createLogger } from '@switchyard/platform/logger';
import { createMetricsRegistry } from '@switchyard/platform/metrics';
import { AddressPolicy } from '@switchyard/platform/net/address-policy';
import { DEFAULT_RETRY_POLICY } from '@switchyard/platform/retry-schedule';
import { adminErrors } from '../admin-errors.js';
import { adminMetrics } from '../admin-metrics.js';
import { destinationSchemas } from '../api-schemas.js';
import { registerAdminApi } from '../app.js';
import { AuthFailureLimiter } from '../auth-failure-limiter.js';
import { ConfigStore } from '../config-store.js';
import type { ControlDeps } from '../control-deps.js';
import { DeadLetterIndex } from '../dead-letter-index.js';
import { LiveTail } from '../live-tail.js';
import { MessageTraceIndex } from '../message-trace-index.js';
import { notificationEndpointSchema } from '../notification-endpoints.js';
import { ReplayIndex } from '../replay-index.js';
import { UsageIndex } from '../usage-index.js';

export const ADMIN_TOKEN = 'unit-test-admin-token-0123456789';

/** Stand-ins the indexes only keep until started (never, here): any use of them fails the test. */
const offline = <T>(name: string): T => new Proxy({}, { get: (_t, key) => { throw new Error(`${name}.${String(key)} used in a unit test`); } }) as T;

export async function adminApp(opts: { authFailureLimit?: number } = {}): Promise<FastifyInstance> {
  const logger = createLogger({ service: 'test', level: 'silent' });
  const registry = createMetricsRegistry('control');
  const kafka = offline<Kafka>('kafka');
  const codec = offline<AvroCodec>('codec');
  const view = new ConfigView({ kafka, codec, topic: 'config', logger, owner: 'test' });
  const policy = new AddressPolicy([]);
  const deps: ControlDeps = {
    view,
    store: new ConfigStore({ producer: offline<Producer>('producer'), codec, topic: 'config', view }),
    clock: Date.now,
    destinationSchemas: destinationSchemas(policy, retryPolicyLimits(DEFAULT_RETRY_POLICY.tiersMs)),
    notificationEndpointSchema: notificationEndpointSchema(policy),
    events: { writeDeletes: async () => {}, writeTasks: async () => {} },
    deadLetters: new DeadLetterIndex({ kafka, codec, topic: 'dead-letter', logger, max: 10 }),
    traces: new MessageTraceIndex({ kafka, codec, topic: 'attempts', logger, max: 10, windowMs: 86_400_000, clock: Date.now }),
    usage: new UsageIndex({ kafka, codec, topic: 'usage', logger }).totals,
    live: new LiveTail({ newConsumer: () => offline<ConsumerClient>('consumer'), codec, topic: 'ingest', logger, metrics: registry }),
    replays: new ReplayIndex({ kafka, codec, topic: 'replays', logger, producer: offline<Producer>('producer') }),
    metrics: adminMetrics(registry),
  };
  const server = createServer({ logger, metrics: registry, readiness: new Lifecycle(logger).readiness, errors: adminErrors });
  registerAdminApi(server, deps, { adminToken: ADMIN_TOKEN, limiter: new AuthFailureLimiter({ limit: opts.authFailureLimit ?? 1000, windowMs: 60_000 }) });
  await server.ready();
  return server;
}
