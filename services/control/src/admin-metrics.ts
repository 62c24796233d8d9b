import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Counter, initialiseCounter, type Registry } from '@switchyard/platform/metrics';

/** The configuration records the admin API writes (label `resource`). */
export type ConfigResource = 'source' | 'write_key' | 'destination' | 'signing_secret' | 'replay' | 'audience' | 'computed_trait' | 'token' | 'notification_endpoint';
export type WriteOperation = 'create' | 'update' | 'delete';
/** How a counted request ended (label `result`). A 401, 403 or 429 of the auth hook is not among them: it counts apart. */
export type AdminResult = 'ok' | 'invalid' | 'not_found' | 'conflict' | 'error';
export const ADMIN_RESULTS: readonly AdminResult[] = ['ok', 'invalid', 'not_found', 'conflict', 'error'];
export type AuthFailure = 'missing' | 'invalid' | 'rate_limited';

/** What a route's requests count as; routes declare it in their fastify route config (`counted`). */
export type Counted =
  | { as: 'config_write'; resource: ConfigResource; operation: WriteOperation }
  | { as: 'deletion_request' }
  | { as: 'dead_letter_replay' };

declare module 'fastify' {
  interface FastifyContextConfig {
    counted?: Counted;
  }
}

/** Route options that declare what a route counts as: `app.post(path, counted.write('source', 'create'), handler)`. */
export const counted = {
  write: (resource: ConfigResource, operation: WriteOperation) => ({ config: { counted: { as: 'config_write', resource, operation } as Counted } }),
  deletion: { config: { counted: { as: 'deletion_request' } as Counted } },
  replay: { config: { counted: { as: 'dead_letter_replay' } as Counted } },
};

/**
 * The admin API's counters: what operators changed, asked to delete or replayed, and who was
 * refused. Labels are fixed sets (resource, operation, result, reason): no ids.
 */
export function adminMetrics(registry: Registry) {
  const registers = [registry];
  return {
    writes: new Counter({ name: 'control_admin_writes_total', help: 'Admin API writes of configuration (config topic), by resource, operation and result (ok, invalid, not_found, conflict, error)', labelNames: ['resource', 'operation', 'result'], registers }),
    deletionRequests: new Counter({ name: 'control_deletion_requests_total', help: 'Deletion requests (POST /v1/deletions), by result', labelNames: ['result'], registers }),
    deletionNotifications: new Counter({ name: 'control_deletion_notifications_total', help: 'Delete notifications written to the ingest topic (one per affected source of a request)', registers }),
    replayRequests: new Counter({ name: 'control_dead_letter_replay_requests_total', help: 'Dead-letter replay requests (POST /v1/dead-letters/replay), by result', labelNames: ['result'], registers }),
    replayLetters: new Counter({ name: 'control_dead_letter_replay_letters_total', help: 'Dead letters named in replay requests: replayed (written to the delivery topic as fresh tasks) or not_found (not in the index)', labelNames: ['result'], registers }),
    authFailures: new Counter({ name: 'control_admin_auth_failures_total', help: 'Admin API requests refused for their credentials, by reason (missing: no Bearer token, 401; invalid: a wrong or revoked token, 401; rate_limited: too many failures from the address, 429)', labelNames: ['reason'], registers }),
    forbidden: new Counter({ name: 'control_admin_forbidden_total', help: 'Admin API requests refused with 403 MISSING_SCOPE, by the scope the route needed', labelNames: ['scope'], registers }),
  };
}

export type AdminMetrics = ReturnType<typeof adminMetrics>;

/**
 * The result label of a counted request, from its status and, for a refusal, its error code.
 * undefined for a 401, 403 or 429: the auth hook refused it before the route (counted apart; a
 * write route never answers 403 itself, since writes need admin tokens, which no source limits).
 */
export function adminResult(status: number, code: string | undefined): AdminResult | undefined {
  if (status === 401 || status === 403 || status === 429) return undefined;
  if (status < 400) return 'ok';
  if (status === 404) return 'not_found';
  if (status === 409 || code?.startsWith('DUPLICATE_')) return 'conflict';
  if (status < 500) return 'invalid';
  return 'error';
}

const UNCOUNTED_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * Counts the admin API's requests in one place: an onResponse hook reads what the matched route
 * declared (`config.counted`) and the final status. Every /v1 route that is not a read must declare
 * it, or registration fails, so a new write route cannot go uncounted. Call before adding routes.
 */
export function countAdminRequests(app: FastifyInstance, metrics: AdminMetrics): void {
  app.addHook('onRoute', (route) => {
    const methods = [route.method].flat();
    const c = route.config?.counted;
    if (!c) {
      if (route.url.startsWith('/v1/') && methods.some((m) => !UNCOUNTED_METHODS.has(m))) {
        throw new Error(`admin route ${methods.join(',')} ${route.url} declares no metrics (config.counted; see admin-metrics.ts)`);
      }
      return;
    }
    // Every series starts at 0, so rate() sees the first request.
    if (c.as === 'config_write') initialiseCounter(metrics.writes, { resource: [c.resource], operation: [c.operation], result: ADMIN_RESULTS });
    else if (c.as === 'deletion_request') initialiseCounter(metrics.deletionRequests, { result: ADMIN_RESULTS });
    else initialiseCounter(metrics.replayRequests, { result: ADMIN_RESULTS });
  });
  initialiseCounter(metrics.authFailures, { reason: ['missing', 'invalid', 'rate_limited'] satisfies AuthFailure[] });
  initialiseCounter(metrics.forbidden, { scope: ['admin', 'read', 'metadata'] });
  initialiseCounter(metrics.replayLetters, { result: ['replayed', 'not_found'] });

  // The error handler turns errors into bodies; the code (DUPLICATE_ID …) is kept for the result.
  const errorCodes = new WeakMap<FastifyRequest, string>();
  app.addHook('onError', async (req, _reply, error) => {
    if (typeof (error as { code?: unknown }).code === 'string') errorCodes.set(req, (error as { code: string }).code);
  });
  app.addHook('onResponse', async (req, reply) => {
    const c = req.routeOptions.config?.counted;
    if (!c) return;
    const result = adminResult(reply.statusCode, errorCodes.get(req));
    if (result === undefined) return;
    if (c.as === 'config_write') metrics.writes.inc({ resource: c.resource, operation: c.operation, result });
    else if (c.as === 'deletion_request') metrics.deletionRequests.inc({ result });
    else metrics.replayRequests.inc({ result });
  });
}
