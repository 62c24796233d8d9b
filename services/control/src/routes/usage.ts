import type { FastifyInstance } from 'fastify';
import { apiError } from '../admin-errors.js';
import type { ControlDeps } from '../control-deps.js';
import { accessOf } from '../scopes.js';

/** Calls per source per UTC day: accepted, rejected, filtered (docs/admin-api.md, "Message trace and usage"). */
export function usageRoutes(app: FastifyInstance, { view, usage }: ControlDeps): void {
  app.get<{ Params: { id: string } }>('/v1/sources/:id/usage', async (req) => {
    const source = view.state.source(req.params.id);
    if (!source) throw apiError('SOURCE_NOT_FOUND', { id: req.params.id });
    accessOf(req).requireSource(source.id);
    return { sourceId: source.id, days: usage.days(source.id) };
  });
}
