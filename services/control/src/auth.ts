import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { ApiError } from './api-error.js';

/**
 * Every /v1 route needs `Authorization: Bearer <token>`. Tokens are compared as SHA-256 digests
 * with timingSafeEqual: equal lengths, constant time. Health, readiness, metrics, the OpenAPI
 * document and the debugger's static page stay open (probes and scrapers carry no token).
 *
 * Which routes are guarded is decided by the route that matched, not by the URL as sent: the
 * router decodes percent-escapes, so `/%761/sources` reaches the /v1/sources handler while its
 * raw URL does not start with /v1/. Unmatched /v1 URLs are guarded too (no route enumeration).
 * `onRefused` hears of each refusal: `missing` (no Bearer token) or `invalid` (a wrong one).
 */
export function requireBearerToken(app: FastifyInstance, token: string, onRefused: (reason: 'missing' | 'invalid') => void = () => {}): void {
  const expected = createHash('sha256').update(token).digest();
  app.addHook('onRequest', async (req) => {
    const route = req.routeOptions.url;
    if (!(route?.startsWith('/v1/') || req.url.startsWith('/v1/'))) return;
    const header = req.headers.authorization ?? '';
    const match = /^Bearer\s+(.+)$/i.exec(header);
    const given = createHash('sha256').update(match?.[1]?.trim() ?? '').digest();
    if (!match || !timingSafeEqual(given, expected)) {
      onRefused(match ? 'invalid' : 'missing');
      throw new ApiError(401, 'UNAUTHORIZED', match ? 'the admin token is not valid' : 'missing Authorization: Bearer <admin token>');
    }
  });
}
