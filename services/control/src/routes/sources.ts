import type { FastifyInstance } from 'fastify';
import type { Source } from '@switchyard/platform/config-view/config-state';
import { apiError } from '../admin-errors.js';
import { parseBody, sourceCreate, sourcePatch } from '../api-schemas.js';
import { counted } from '../admin-metrics.js';
import type { ControlDeps } from '../control-deps.js';
import { change } from '../config-store.js';
import { newSourceId, newWriteKey } from '../ids.js';
import { accessOf } from '../scopes.js';
import { sourceView } from '../views.js';

type IdParams = { Params: { id: string } };

export function sourceRoutes(app: FastifyInstance, { view, store, clock }: ControlDeps): void {
  const find = (id: string): Source => view.state.source(id) ?? (() => { throw apiError('SOURCE_NOT_FOUND', { id }); })();

  app.post('/v1/sources', counted.write('source', 'create'), async (req, reply) => {
    const body = parseBody(sourceCreate, req.body);
    if (body.id && view.state.source(body.id)) throw apiError('DUPLICATE_ID', { kind: 'source', id: body.id, field: 'id' });
    const now = clock();
    const source: Source = { id: body.id ?? newSourceId(), name: body.name, enabled: body.enabled, writeKeys: [newWriteKey()], createdAt: now, updatedAt: now };
    await store.write(change.putSource(source));
    return reply.code(201).send(sourceView(source));
  });

  app.get('/v1/sources', async (req) => {
    const access = accessOf(req);
    return { sources: access.visible(view.state.sources(), (s) => s.id).map((s) => sourceView(s, access.credentials)) };
  });

  app.get<IdParams>('/v1/sources/:id', async (req) => {
    const access = accessOf(req);
    const source = find(req.params.id);
    access.requireSource(source.id);
    return sourceView(source, access.credentials);
  });

  app.patch<IdParams>('/v1/sources/:id', counted.write('source', 'update'), async (req) => {
    const current = find(req.params.id);
    const body = parseBody(sourcePatch, req.body);
    const next: Source = { ...current, name: body.name ?? current.name, enabled: body.enabled ?? current.enabled, updatedAt: clock() };
    await store.write(change.putSource(next));
    return sourceView(next);
  });

  app.delete<IdParams>('/v1/sources/:id', counted.write('source', 'delete'), async (req, reply) => {
    const current = find(req.params.id);
    // A source's destinations go with it: nothing could reach them any more.
    const destinations = view.state.destinationsOfSource(current.id);
    await store.write(...destinations.map((d) => change.deleteDestination(d.id)), change.deleteSource(current.id));
    return reply.code(204).send();
  });

  app.post<IdParams>('/v1/sources/:id/write-keys', counted.write('write_key', 'create'), async (req, reply) => {
    const current = find(req.params.id);
    const writeKey = newWriteKey();
    const next: Source = { ...current, writeKeys: [...current.writeKeys, writeKey], updatedAt: clock() };
    await store.write(change.putSource(next));
    return reply.code(201).send({ writeKey, source: sourceView(next) });
  });

  app.delete<{ Params: { id: string; key: string } }>('/v1/sources/:id/write-keys/:key', counted.write('write_key', 'delete'), async (req) => {
    const current = find(req.params.id);
    if (!current.writeKeys.includes(req.params.key)) throw apiError('WRITE_KEY_NOT_FOUND');
    const next: Source = { ...current, writeKeys: current.writeKeys.filter((k) => k !== req.params.key), updatedAt: clock() };
    await store.write(change.putSource(next));
    return sourceView(next);
  });
}
