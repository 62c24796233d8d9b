import type { FastifyInstance } from 'fastify';
import type { Destination } from '@switchyard/platform/config-view/config-state';
import { ApiError, notFound } from '../api-error.js';
import { parseBody } from '../api-schemas.js';
import { counted } from '../admin-metrics.js';
import type { ControlDeps } from '../control-deps.js';
import { change } from '../config-store.js';
import { newDestinationId } from '../ids.js';
import { destinationView, storedFilter } from '../views.js';

type IdParams = { Params: { id: string } };

export function destinationRoutes(app: FastifyInstance, { view, store, clock, destinationSchemas }: ControlDeps): void {
  const find = (id: string): Destination => view.state.destination(id) ?? (() => { throw notFound('destination', id); })();

  app.post('/v1/destinations', counted.write('destination', 'create'), async (req, reply) => {
    const body = parseBody(destinationSchemas.create, req.body);
    if (!view.state.source(body.sourceId)) throw new ApiError(400, 'UNKNOWN_SOURCE', `no source ${JSON.stringify(body.sourceId)}`, 'sourceId');
    const now = clock();
    const destination: Destination = {
      id: body.id ?? newDestinationId(), sourceId: body.sourceId, name: body.name, type: body.type, enabled: body.enabled,
      sharedSecret: body.settings.sharedSecret ?? null, webhooks: body.settings.webhooks, createdAt: now, updatedAt: now,
      filter: storedFilter(body.filter),
    };
    if (view.state.destination(destination.id)) throw new ApiError(400, 'DUPLICATE_ID', `destination ${destination.id} exists`, 'id');
    await store.write(change.putDestination(destination));
    return reply.code(201).send(destinationView(destination));
  });

  app.get<{ Querystring: { sourceId?: string } }>('/v1/destinations', async (req) => {
    const { sourceId } = req.query;
    const list = sourceId ? view.state.destinationsOfSource(sourceId) : view.state.destinations();
    return { destinations: list.map(destinationView) };
  });

  app.get<IdParams>('/v1/destinations/:id', async (req) => destinationView(find(req.params.id)));

  app.patch<IdParams>('/v1/destinations/:id', counted.write('destination', 'update'), async (req) => {
    const current = find(req.params.id);
    const body = parseBody(destinationSchemas.patch, req.body);
    const next: Destination = {
      ...current,
      name: body.name ?? current.name,
      enabled: body.enabled ?? current.enabled,
      sharedSecret: body.settings?.sharedSecret === undefined ? current.sharedSecret : body.settings.sharedSecret,
      webhooks: body.settings?.webhooks ?? current.webhooks,
      filter: body.filter === undefined ? current.filter : storedFilter(body.filter),
      updatedAt: clock(),
    };
    await store.write(change.putDestination(next));
    return destinationView(next);
  });

  app.delete<IdParams>('/v1/destinations/:id', counted.write('destination', 'delete'), async (req, reply) => {
    await store.write(change.deleteDestination(find(req.params.id).id));
    return reply.code(204).send();
  });
}
