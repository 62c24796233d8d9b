import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { Registry } from 'prom-client';
import { SwitchyardError } from '../errors.js';
import type { Logger } from '../logger.js';
import type { Readiness } from '../lifecycle.js';

export interface ServerOptions {
  logger: Logger;
  metrics: Registry;
  readiness: Readiness;
  /** Largest request body accepted by routes that do not set their own limit. */
  bodyLimit?: number;
  /** Trust X-Forwarded-For from these proxies (fastify trustProxy). */
  trustProxy?: boolean | string | string[];
}

/**
 * The HTTP server of a service: fastify with `/healthz` (the process is alive), `/readyz`
 * (every dependency the service needs is ready) and `/metrics` (Prometheus). Services add their
 * own routes to it. Errors are JSON `{code, message}`.
 */
export function createServer({ logger, metrics, readiness, bodyLimit = 1 << 20, trustProxy = false }: ServerOptions): FastifyInstance {
  const app = Fastify({
    // Per-request lines would flood the logs at ingest rates; fastify's own warnings and errors stay.
    loggerInstance: logger.child({ component: 'http' }, { level: 'warn' }) as FastifyBaseLogger,
    bodyLimit,
    trustProxy,
    return503OnClosing: true,
    forceCloseConnections: 'idle',
  });

  app.get('/healthz', async () => ({ status: 'ok' }));
  app.get('/readyz', async (_req, reply) => {
    const state = readiness.state();
    return reply.code(state.ready ? 200 : 503).send(state);
  });
  app.get('/metrics', async (_req, reply) => {
    return reply.type(metrics.contentType).send(await metrics.metrics());
  });

  app.setErrorHandler((error: { statusCode?: number; status?: number; code?: string; message?: string }, _req, reply) => {
    if (error instanceof SwitchyardError) {
      if (error.status >= 500 && !error.retriable && error.status !== 503) logger.error({ err: error }, 'request failed');
      return reply.code(error.status).send(error.toJSON());
    }
    const status = error.statusCode ?? error.status ?? 500;
    const code = typeof error.code === 'string' ? error.code : 'INTERNAL';
    if (status >= 500) logger.error({ err: error }, 'request failed');
    return reply.code(status).send({ code, message: status >= 500 ? 'internal error' : (error.message ?? 'request refused') });
  });
  app.setNotFoundHandler((req, reply) => reply.code(404).send({ code: 'NOT_FOUND', message: `no route for ${req.method} ${req.url.split('?')[0]}` }));
  return app;
}
