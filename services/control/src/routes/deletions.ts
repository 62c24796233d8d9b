import { randomBytes } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { Delete } from '@switchyard/platform/schemas/generated';
import { apiError } from '../admin-errors.js';
import { parseBody } from '../api-schemas.js';
import { counted } from '../admin-metrics.js';
import type { ControlDeps } from '../control-deps.js';

export const deletionRequest = z.strictObject({
  userId: z.string({ error: 'userId is required' }).min(1, 'userId is required').max(1024),
  sourceIds: z.array(z.string().min(1)).min(1, 'name at least one source, or leave sourceIds out for all').optional(),
});

/**
 * Deletion requests (docs/decisions/0009-deletion-requests.md): one `delete` notification per
 * affected source — the named ones, or every source — that has an enabled webhooks destination.
 * Each is written to the ingest topic like any call, so it is fanned out, delivered, retried and
 * dead-lettered the usual way.
 */
export function deletionRoutes(app: FastifyInstance, { view, clock, events, metrics }: ControlDeps): void {
  app.post('/v1/deletions', counted.deletion, async (req, reply) => {
    const body = parseBody(deletionRequest, req.body);
    for (const id of body.sourceIds ?? []) {
      if (!view.state.source(id)) throw apiError('UNKNOWN_SOURCE', { id, field: 'sourceIds' });
    }
    const candidates = body.sourceIds ?? view.state.sources().map((s) => s.id);
    const affected = [...new Set(candidates)].filter((id) => view.state.enabledWebhooksOf(id).length > 0);
    const requestId = `del_${randomBytes(10).toString('hex')}`;
    const now = clock();
    const notifications: Delete[] = affected.map((sourceId) => ({
      messageId: `${requestId}-${sourceId}`, sourceId, userId: body.userId, anonymousId: null, requestId,
      timestamp: now, originalTimestamp: null, sentAt: null, receivedAt: now, context: null, integrations: null,
    }));
    await events.writeDeletes(notifications);
    metrics.deletionNotifications.inc(notifications.length);
    return reply.code(202).send({ requestId, userId: body.userId, notifications: notifications.length, sourceIds: affected });
  });
}
