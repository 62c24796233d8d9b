import type { FastifyInstance } from 'fastify';
import type { ControlDeps } from '../control-deps.js';
import { accessOf } from '../scopes.js';

/**
 * The per-message trace: where an event went and what happened to each copy (docs/admin-api.md,
 * "Message trace and usage"). It carries no payload (redaction.ts), so every scope sees it whole;
 * a token limited to sources sees the traces of its sources only.
 */
export function messageRoutes(app: FastifyInstance, { traces }: ControlDeps): void {
  app.get<{ Params: { messageId: string } }>('/v1/messages/:messageId', async (req, reply) => {
    const trace = traces.get(req.params.messageId);
    if (trace) {
      accessOf(req).requireSource(trace.sourceId);
      return trace;
    }
    // `error` is the trace contract's field (the debugger reads it); `code` is the admin API's usual one.
    return reply.code(404).send({
      error: 'not_found', code: 'MESSAGE_NOT_FOUND',
      message: `no record of message ${JSON.stringify(req.params.messageId)} in the last ${windowText(traces.windowMs)}: it may be older, not have reached fan-out yet, or have been forgotten (the index keeps at most ${traces.max} messages)`,
    });
  });
}

function windowText(ms: number): string {
  return ms % 3_600_000 === 0 ? `${ms / 3_600_000} h` : ms % 60_000 === 0 ? `${ms / 60_000} min` : `${ms / 1000} s`;
}
