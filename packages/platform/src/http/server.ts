import Fastify, { type FastifyBaseLogger, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import type { Registry } from 'prom-client';
import type { Logger } from '../logger.js';
import type { Readiness } from '../lifecycle.js';
import type { ErrorCatalogue, HttpError } from './error-catalogue.js';
import { refusalOf, serverErrorCatalogue, type ServerErrorTable } from './server-errors.js';

export interface ServerOptions {
  logger: Logger;
  metrics: Registry;
  readiness: Readiness;
  /** Largest request body accepted by routes that do not set their own limit. */
  bodyLimit?: number;
  /** Trust X-Forwarded-For from these proxies (fastify trustProxy). */
  trustProxy?: boolean | string | string[];
  /** The API's error catalogue: the server answers its own refusals (no route, unreadable body, …) from it. */
  errors?: ErrorCatalogue<ServerErrorTable>;
}

/**
 * The HTTP server of a service: fastify with `/healthz` (the process is alive), `/readyz`
 * (every dependency the service needs is ready) and `/metrics` (Prometheus). Services add their
 * own routes to it. Every error is answered as JSON `{code, message, …}` with a code of the
 * service's catalogue (server-errors.ts maps fastify's own), and a request without a body is
 * accepted whatever its Content-Type.
 */
export function createServer({ logger, metrics, readiness, bodyLimit = 1 << 20, trustProxy = false, errors = serverErrorCatalogue }: ServerOptions): FastifyInstance {
  const answer = (reply: FastifyReply, refusal: HttpError) => reply.code(refusal.status).send(refusal.toJSON());
  const app = Fastify({
    // Per-request lines would flood the logs at ingest rates; fastify's own warnings and errors stay.
    loggerInstance: logger.child({ component: 'http' }, { level: 'warn' }) as FastifyBaseLogger,
    bodyLimit,
    trustProxy,
    // fastify's own 503 while closing has a body of its own shape: the hook below answers SHUTTING_DOWN instead.
    return503OnClosing: false,
    forceCloseConnections: 'idle',
    // Refusals fastify makes before routing (a URL that does not decode, a path parameter too long).
    frameworkErrors: (error, req, reply) => answer(reply, refusalOf(errors, error, req)),
  });

  let closing = false;
  app.addHook('preClose', async () => { closing = true; });
  app.addHook('onRequest', async (_req, reply) => {
    if (!closing) return;
    void reply.header('connection', 'close');
    throw errors.error('SHUTTING_DOWN');
  });

  acceptEmptyBodies(app, errors);

  app.get('/healthz', async () => ({ status: 'ok' }));
  app.get('/readyz', async (_req, reply) => {
    const state = readiness.state();
    return reply.code(state.ready ? 200 : 503).send(state);
  });
  app.get('/metrics', async (_req, reply) => {
    return reply.type(metrics.contentType).send(await metrics.metrics());
  });

  app.setErrorHandler((error: unknown, req, reply) => {
    const refusal = refusalOf(errors, error, req);
    if (refusal.status >= 500 && !refusal.retriable) logger.error({ err: refusal.cause ?? refusal }, 'request failed');
    return answer(reply, refusal);
  });
  app.setNotFoundHandler((req, reply) => answer(reply, errors.error('NOT_FOUND', { method: req.method, path: req.url.split('?')[0]! })));
  return app;
}

/**
 * A request that carries no body (a DELETE, a POST action, whatever its Content-Type) reaches its
 * route with `req.body` undefined, so the route alone says whether it needs one: fastify would
 * refuse an empty application/json body (FST_ERR_CTP_EMPTY_JSON_BODY), and any other type, even one
 * that is no media type at all, with 415, before the route runs. A request that says it has no body
 * (no Content-Length or 0, not chunked) is not parsed at all; under the parsers, an empty chunked
 * body is undefined too. JSON is read by fastify's default parser (prototype poisoning refused); any
 * other non-empty body is refused as UNSUPPORTED_MEDIA_TYPE. A scope with parsers of its own (the
 * tracking API's) replaces the parsers.
 */
function acceptEmptyBodies(app: FastifyInstance, errors: ErrorCatalogue<ServerErrorTable>): void {
  app.addHook('onRequest', async (req) => {
    const length = req.headers['content-length'];
    if (req.headers['transfer-encoding'] === undefined && (length === undefined || length === '0')) delete req.headers['content-type'];
  });
  const json = app.getDefaultJsonParser('error', 'error');
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (req, body, done) => {
    if (body.length === 0) done(null, undefined);
    else json(req, body.toString(), done);
  });
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (req: FastifyRequest, body: Buffer, done) => {
    if (body.length === 0) done(null, undefined);
    else done(errors.error('UNSUPPORTED_MEDIA_TYPE', { contentType: req.headers['content-type'] ?? '' }), undefined);
  });
}
