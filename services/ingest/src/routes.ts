import cors from '@fastify/cors';
import type { FastifyInstance } from 'fastify';
import { SETTINGS_MAX_AGE_SECONDS, type BrowserEndpoint } from './browser-settings.js';
import { openApiDocument } from './openapi.js';
import { handleIngest, type IngestDeps } from './ingest-handler.js';
import { ROUTES, SETTINGS_PATH } from './paths.js';
import { MAX_REQUEST_BYTES } from './request-body.js';
import { trackingErrors } from './tracking-errors.js';
import { handleSettings } from './settings-handler.js';

/**
 * The tracking API, in its own fastify scope: every Content-Type is read as raw bytes (browsers
 * send JSON as text/plain; decoding is ours), bodies are capped while being read, CORS is open
 * (browsers call from any site; the write key is the credential), and trailing slashes match.
 * Beside it, the settings analytics.js loads before it sends anything.
 */
export async function trackingApi(app: FastifyInstance, deps: IngestDeps & { browser: BrowserEndpoint }): Promise<void> {
  const openapi = openApiDocument();
  app.get('/openapi.json', async () => openapi);
  await app.register(async (scope) => {
    // Request headers are allowed as the preflight asks for them (no fixed list): analytics.js sends
    // Authorization, X-Retry-Count on retries and whatever headers a page configures for it. With
    // no cookies involved (origin *, no credentials) an allowed header grants nothing.
    await scope.register(cors, { origin: '*', methods: ['GET', 'POST', 'OPTIONS'], maxAge: 86400 });
    scope.removeAllContentTypeParsers();
    // Content-Type is ignored, even one that is not a media type at all ("nonsense"), which fastify
    // would otherwise answer with 415 before any parser runs.
    scope.addHook('onRequest', async (req) => {
      if (req.headers['content-type'] !== undefined) req.headers['content-type'] = 'application/octet-stream';
    });
    scope.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: MAX_REQUEST_BYTES }, (_req, body, done) => done(null, body));
    // A body over the limit is refused while being read, before the route: counted here, answered by
    // the server's error handler from the catalogue (BODY_TOO_LARGE, 400 rather than 413: clients
    // retry 413, and retrying the same body cannot help).
    scope.setErrorHandler((error: { code?: string }, req) => {
      if (error.code === 'FST_ERR_CTP_BODY_TOO_LARGE') deps.metrics.requests.inc({ route: routeOf(req.url), status: trackingErrors.entries.BODY_TOO_LARGE.status });
      throw error;
    });

    scope.get<{ Params: { writeKey: string } }>(SETTINGS_PATH, async (req, reply) => {
      try {
        const settings = await handleSettings(deps, req.params.writeKey);
        deps.metrics.requests.inc({ route: 'settings', status: 200 });
        return reply.header('cache-control', `public, max-age=${SETTINGS_MAX_AGE_SECONDS}`).send(settings);
      } catch (err) {
        const status = (err as { status?: number }).status ?? 500;
        deps.metrics.requests.inc({ route: 'settings', status });
        // A key refused now may be valid in a moment (a source just created or enabled).
        void reply.header('cache-control', 'no-store');
        if (status === 503) void reply.header('retry-after', '2');
        throw err;
      }
    });

    for (const [path, route] of ROUTES) {
      for (const url of [path, `${path}/`]) {
        // The parser's limit, named on the route too so a refusal's message can say it.
        scope.post(url, { bodyLimit: MAX_REQUEST_BYTES }, async (req, reply) => {
          const end = deps.metrics.requestDuration.startTimer({ route });
          deps.metrics.inFlight.inc();
          try {
            const body = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
            deps.metrics.receivedBytes.inc(body.length);
            const result = await handleIngest(deps, {
              route, body, contentEncoding: header(req.headers['content-encoding']), authorization: header(req.headers.authorization), ip: req.ip,
            });
            deps.metrics.requests.inc({ route, status: 200 });
            return reply.code(200).send(result);
          } catch (err) {
            const status = (err as { status?: number; statusCode?: number }).status ?? (err as { statusCode?: number }).statusCode ?? 500;
            deps.metrics.requests.inc({ route, status });
            if (status === 503) void reply.header('retry-after', '2');
            throw err;
          } finally {
            deps.metrics.inFlight.dec();
            end();
          }
        });
      }
    }
  });
}

function routeOf(url: string): string {
  const path = url.split('?')[0]!.replace(/\/$/, '');
  return ROUTES.find(([p]) => p === path)?.[1] ?? 'unknown';
}

function header(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}
