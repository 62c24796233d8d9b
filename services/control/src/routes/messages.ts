import type { FastifyInstance } from 'fastify';
import { apiError } from '../admin-errors.js';
import type { ControlDeps } from '../control-deps.js';
import { accessOf } from '../scopes.js';

/**
 * The per-message trace: where an event went and what happened to each copy (docs/admin-api.md,
 * "Message trace and usage"). It carries no payload (redaction.ts), so every scope sees it whole;
 * a token limited to sources sees the traces of its sources only.
 */
export function messageRoutes(app: FastifyInstance, { traces }: ControlDeps): void {
  app.get<{ Params: { messageId: string } }>('/v1/messages/:messageId', async (req) => {
    const trace = traces.get(req.params.messageId);
    if (!trace) throw apiError('MESSAGE_NOT_FOUND', { id: req.params.messageId, window: windowText(traces.windowMs), max: traces.max });
    accessOf(req).requireSource(trace.sourceId);
    return trace;
  });
}

function windowText(ms: number): string {
  return ms % 3_600_000 === 0 ? `${ms / 3_600_000} h` : ms % 60_000 === 0 ? `${ms / 60_000} min` : `${ms / 1000} s`;
}
