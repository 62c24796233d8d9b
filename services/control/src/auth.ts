import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { ApiError } from './api-error.js';

/**
 * Every /v1 route needs `Authorization: Bearer <token>`. Tokens are compared as SHA-256 digests
 * with timingSafeEqual: equal lengths, constant time. Health, readiness, metrics and the OpenAPI
 * document stay open (probes and scrapers carry no token).
 */
export function requireBearerToken(app: FastifyInstance, token: string): void {
  const expected = createHash('sha256').update(token).digest();
  app.addHook('onRequest', async (req) => {
    if (!req.url.startsWith('/v1/')) return;
    const header = req.headers.authorization ?? '';
    const match = /^Bearer\s+(.+)$/i.exec(header);
    const given = createHash('sha256').update(match?.[1]?.trim() ?? '').digest();
    if (!match || !timingSafeEqual(given, expected)) {
      throw new ApiError(401, 'UNAUTHORIZED', match ? 'the admin token is not valid' : 'missing Authorization: Bearer <admin token>');
    }
  });
}
