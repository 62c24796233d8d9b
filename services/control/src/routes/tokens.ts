import { createHash } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { AdminToken } from '@switchyard/platform/config-view/config-state';
import { apiError } from '../admin-errors.js';
import { parseBody } from '../api-schemas.js';
import { counted } from '../admin-metrics.js';
import type { ControlDeps } from '../control-deps.js';
import { change } from '../config-store.js';
import { newAdminToken, newTokenId } from '../ids.js';
import { SCOPES } from '../scopes.js';

/** Stored tokens at most: each is looked up per request from memory, and a list is read whole. */
export const MAX_TOKENS = 1000;

export const tokenCreate = z.strictObject({
  name: z.string({ error: 'name is required' }).trim().min(1, 'name is required').max(200),
  scopes: z.array(z.enum(SCOPES, { error: `a scope is one of ${SCOPES.join(', ')}` }), { error: 'scopes is required: a list of admin, read, metadata' })
    .min(1, 'name at least one scope').max(SCOPES.length * 2),
  sourceIds: z.array(z.string().min(1)).min(1, 'name at least one source, or leave sourceIds out for all').max(100).optional()
    .meta({ description: 'The sources the token is limited to (not with admin); left out: every source' }),
});

/** The API's view of a stored token: never the token, never its hash. */
export function tokenView(t: AdminToken) {
  return { id: t.id, name: t.name, scopes: [...t.scopes], sourceIds: t.sourceIds === null ? null : [...t.sourceIds], createdAt: new Date(t.createdAt).toISOString() };
}

/**
 * Admin API tokens (docs/admin-api.md, "Tokens and scopes"): made, listed and revoked by admin
 * tokens only. A token is shown once, in the answer that made it; the config topic keeps its
 * SHA-256, and a revocation is a tombstone every control instance reads (auth.ts bounds how late).
 */
export function tokenRoutes(app: FastifyInstance, { view, store, clock }: ControlDeps): void {
  app.post('/v1/tokens', counted.write('token', 'create'), async (req, reply) => {
    const body = parseBody(tokenCreate, req.body);
    const scopes = SCOPES.filter((s) => body.scopes.includes(s));
    if (body.sourceIds && scopes.includes('admin')) {
      throw apiError('INVALID_FIELD', { problem: 'sourceIds: an admin token cannot be limited to sources (it could make tokens for every source)', field: 'sourceIds' });
    }
    body.sourceIds?.forEach((id, i) => { if (!view.state.source(id)) throw apiError('UNKNOWN_SOURCE', { id, field: `sourceIds[${i}]` }); });
    const sourceIds = body.sourceIds ? [...new Set(body.sourceIds)] : null;
    if (view.state.adminTokens().length >= MAX_TOKENS) throw apiError('TOO_MANY_TOKENS', { max: MAX_TOKENS });
    const token = newAdminToken();
    const stored: AdminToken = { id: newTokenId(), name: body.name, scopes, sourceIds, tokenHash: createHash('sha256').update(token).digest('hex'), createdAt: clock() };
    await store.write(change.putAdminToken(stored));
    return reply.code(201).send({ ...tokenView(stored), token });
  });

  app.get('/v1/tokens', { config: { scope: 'admin' } }, async () => ({
    tokens: view.state.adminTokens().sort((a, b) => a.createdAt - b.createdAt || (a.id < b.id ? -1 : 1)).map(tokenView),
  }));

  app.delete<{ Params: { id: string } }>('/v1/tokens/:id', counted.write('token', 'delete'), async (req, reply) => {
    if (!view.state.adminToken(req.params.id)) throw apiError('TOKEN_NOT_FOUND', { id: req.params.id });
    await store.write(change.deleteAdminToken(req.params.id));
    return reply.code(204).send();
  });
}
