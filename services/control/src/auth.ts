import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AdminToken } from '@switchyard/platform/config-view/config-state';
import type { HttpError } from '@switchyard/platform/http/error-catalogue';
import { apiError } from './admin-errors.js';
import type { AuthFailureLimiter } from './auth-failure-limiter.js';
import { Access, ENV_ADMIN, hasScope, isScope, missingScope, requiredScope, type Principal, type Scope } from './scopes.js';

/** Where stored tokens are looked up: the config view (or a stand-in in unit tests). */
export interface TokenLookup {
  /** The stored token whose SHA-256 is `hash`. */
  byHash(hash: Buffer): AdminToken | undefined;
  /** The time as of which every stored token is known; undefined before the view has loaded. */
  currentAsOf(): number | undefined;
  /** Resolves true once every token acknowledged by `since` is known, false after timeoutMs. */
  whenCurrent(since: number, timeoutMs: number): Promise<boolean>;
}

/**
 * How stale the view of stored tokens may be when one is used: a revoked token is refused by
 * every control instance for requests that arrive this long after the revocation was acknowledged
 * (or, with the config topic out of reach for longer than TOKEN_VIEW_WAIT_MS, answered 503).
 */
export const TOKEN_VIEW_MAX_LAG_MS = 1000;
export const TOKEN_VIEW_WAIT_MS = 1000;

export type AuthRefusal = 'missing' | 'invalid' | 'rate_limited';

export interface AuthOptions {
  /** SWITCHYARD_ADMIN_TOKEN: an admin token of every source. */
  adminToken: string;
  tokens: TokenLookup;
  limiter: AuthFailureLimiter;
  clock: () => number;
  /** Hears of each refused authentication: missing, invalid, or rate_limited (429). */
  onRefused?: (reason: AuthRefusal) => void;
  /** Hears of each 403 of the hook: a token without the scope the route needs. */
  onForbidden?: (scope: Scope) => void;
}

const sha256 = (text: string) => createHash('sha256').update(text).digest();

/**
 * Every /v1 route needs `Authorization: Bearer <token>`: SWITCHYARD_ADMIN_TOKEN, or a token made
 * with POST /v1/tokens (stored as its SHA-256 in the config topic). Tokens are compared as SHA-256
 * digests with timingSafeEqual. Health, readiness, metrics, the OpenAPI document and the
 * debugger's static page stay open (probes and scrapers carry no token).
 *
 * Which routes are guarded is decided by the route that matched, not by the URL as sent: the
 * router decodes percent-escapes, so `/%761/sources` reaches the /v1/sources handler while its
 * raw URL does not start with /v1/. Unmatched /v1 URLs are guarded too (no route enumeration).
 *
 * Then the scope: a request needs the one `requiredScope` names (any write needs admin), else 403
 * MISSING_SCOPE; the routes ask `req.access` about payloads and sources. A failed authentication is
 * counted against the client's address (AuthFailureLimiter): past the limit it is answered 429
 * with Retry-After instead of 401. A valid token is never limited.
 */
export function requireBearerToken(app: FastifyInstance, opts: AuthOptions): void {
  const expected = sha256(opts.adminToken);
  const refuse = (req: FastifyRequest, reply: FastifyReply, reason: 'missing' | 'invalid'): never => {
    const verdict = opts.limiter.fail(req.ip, opts.clock());
    if (verdict.limited) {
      opts.onRefused?.('rate_limited');
      reply.header('retry-after', String(verdict.retryAfterSeconds));
      throw apiError('TOO_MANY_AUTH_FAILURES', { retryAfterSeconds: verdict.retryAfterSeconds });
    }
    opts.onRefused?.(reason);
    throw apiError('UNAUTHORIZED', { reason });
  };

  app.decorateRequest('access', undefined);
  app.addHook('onRequest', async (req, reply) => {
    const route = req.routeOptions.url;
    if (!(route?.startsWith('/v1/') || req.url.startsWith('/v1/'))) return;
    const arrivedAt = opts.clock();
    const match = /^Bearer\s+(.+)$/i.exec(req.headers.authorization ?? '');
    if (!match) return refuse(req, reply, 'missing');
    const given = sha256(match[1]!.trim());
    let principal: Principal;
    if (timingSafeEqual(given, expected)) {
      principal = ENV_ADMIN;
    } else {
      principal = await storedPrincipal(opts.tokens, given, arrivedAt) ?? refuse(req, reply, 'invalid');
    }
    const needed = requiredScope(req.method, req.routeOptions.config?.scope);
    if (!hasScope(principal, needed)) {
      opts.onForbidden?.(needed);
      throw missingScope(needed);
    }
    req.access = new Access(principal);
  });
}

/**
 * The principal of a stored token, or undefined when no stored token has that digest. A known
 * token is used only once the view is current to within TOKEN_VIEW_MAX_LAG_MS of the request, so a
 * revocation written on another instance cannot go unseen; a view that cannot get there (config
 * topic unreachable) or has not loaded yet answers 503 CONFIG_BEHIND rather than guess.
 */
async function storedPrincipal(tokens: TokenLookup, digest: Buffer, arrivedAt: number): Promise<Principal | undefined> {
  if (tokens.currentAsOf() === undefined) throw configBehind();
  if (!tokens.byHash(digest)) return undefined;
  if (!(await tokens.whenCurrent(arrivedAt - TOKEN_VIEW_MAX_LAG_MS, TOKEN_VIEW_WAIT_MS))) throw configBehind();
  // Looked up again: the record read while waiting may be its revocation.
  const stored = tokens.byHash(digest);
  if (!stored) return undefined;
  return { tokenId: stored.id, scopes: new Set(stored.scopes.filter(isScope)), sourceIds: stored.sourceIds === null ? null : new Set(stored.sourceIds) };
}

function configBehind(): HttpError {
  return apiError('CONFIG_BEHIND');
}
