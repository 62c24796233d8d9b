import { randomBytes } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { parseCondition } from '@switchyard/platform/audiences/condition';
import { parseComputedTrait } from '@switchyard/platform/audiences/computed-trait';
import { snakeCase } from '@switchyard/platform/audiences/snake-case';
import type { Audience, ComputedTrait } from '@switchyard/platform/config-view/config-state';
import { apiError } from '../admin-errors.js';
import { parseBody } from '../api-schemas.js';
import { counted } from '../admin-metrics.js';
import type { ControlDeps } from '../control-deps.js';
import { change } from '../config-store.js';
import { accessOf } from '../scopes.js';

export const audienceCreate = z.strictObject({
  sourceId: z.string({ error: 'sourceId is required' }).min(1),
  name: z.string({ error: 'name is required' }).trim().min(1).max(200),
  condition: z.unknown(),
});
export const audiencePatch = z.strictObject({ condition: z.unknown() });
export const computedTraitCreate = z.strictObject({
  sourceId: z.string({ error: 'sourceId is required' }).min(1),
  name: z.string({ error: 'name is required' }).trim().min(1).max(200),
  definition: z.unknown(),
});

type IdParams = { Params: { id: string } };

function audienceView(a: Audience) {
  return { id: a.id, sourceId: a.sourceId, name: a.name, property: snakeCase(a.name), condition: JSON.parse(a.condition), createdAt: new Date(a.createdAt).toISOString(), updatedAt: new Date(a.updatedAt).toISOString() };
}
function traitView(t: ComputedTrait) {
  return { id: t.id, sourceId: t.sourceId, name: t.name, trait: snakeCase(t.name), definition: JSON.parse(t.kind), createdAt: new Date(t.createdAt).toISOString(), updatedAt: new Date(t.updatedAt).toISOString() };
}

/** A list route's items: of the `sourceId` asked for (403 if the token may not see it), else of every source it may see. */
function visibleOfSource<T extends { sourceId: string }>(req: FastifyRequest<{ Querystring: { sourceId?: string } }>, items: T[]): T[] {
  const access = accessOf(req);
  const { sourceId } = req.query;
  if (sourceId) access.requireSource(sourceId);
  return access.visible(items, (item) => item.sourceId).filter((item) => !sourceId || item.sourceId === sourceId);
}

function validCondition(value: unknown): string {
  const parsed = parseCondition(value);
  if (!parsed.ok) throw apiError('INVALID_CONDITION', { problem: parsed.message, field: parsed.path ? `condition.${parsed.path}` : 'condition' });
  return JSON.stringify(value);
}

/**
 * Audiences and computed traits (docs/decisions/0010-audiences-and-computed-traits.md): validated
 * here, stored in the config topic, evaluated by the audiences service. A property name (the
 * snake_case of the name) is unique per source, since two definitions writing one user property
 * would overwrite each other.
 */
export function audienceRoutes(app: FastifyInstance, { view, store, clock }: ControlDeps): void {
  const propertyTaken = (sourceId: string, property: string) =>
    view.state.audiences().some((a) => a.sourceId === sourceId && snakeCase(a.name) === property)
    || view.state.computedTraits().some((t) => t.sourceId === sourceId && snakeCase(t.name) === property);
  const requireSource = (id: string) => { if (!view.state.source(id)) throw apiError('UNKNOWN_SOURCE', { id, field: 'sourceId' }); };

  app.post('/v1/audiences', counted.write('audience', 'create'), async (req, reply) => {
    const body = parseBody(audienceCreate, req.body);
    requireSource(body.sourceId);
    if (propertyTaken(body.sourceId, snakeCase(body.name))) throw apiError('DUPLICATE_PROPERTY', { property: snakeCase(body.name), field: 'name' });
    const now = clock();
    const audience: Audience = { id: `aud_${randomBytes(8).toString('hex')}`, sourceId: body.sourceId, name: body.name, condition: validCondition(body.condition), createdAt: now, updatedAt: now };
    await store.write(change.putAudience(audience));
    return reply.code(201).send(audienceView(audience));
  });
  app.get<{ Querystring: { sourceId?: string } }>('/v1/audiences', async (req) => ({
    audiences: visibleOfSource(req, view.state.audiences()).map(audienceView),
  }));
  app.get<IdParams>('/v1/audiences/:id', async (req) => {
    const audience = view.state.audience(req.params.id) ?? (() => { throw apiError('AUDIENCE_NOT_FOUND', { id: req.params.id }); })();
    accessOf(req).requireSource(audience.sourceId);
    return audienceView(audience);
  });
  app.patch<IdParams>('/v1/audiences/:id', counted.write('audience', 'update'), async (req) => {
    const current = view.state.audience(req.params.id) ?? (() => { throw apiError('AUDIENCE_NOT_FOUND', { id: req.params.id }); })();
    const body = parseBody(audiencePatch, req.body);
    const next: Audience = { ...current, condition: validCondition(body.condition), updatedAt: clock() };
    await store.write(change.putAudience(next));
    return audienceView(next);
  });
  app.delete<IdParams>('/v1/audiences/:id', counted.write('audience', 'delete'), async (req, reply) => {
    if (!view.state.audience(req.params.id)) throw apiError('AUDIENCE_NOT_FOUND', { id: req.params.id });
    await store.write(change.deleteAudience(req.params.id));
    return reply.code(204).send();
  });

  app.post('/v1/computed-traits', counted.write('computed_trait', 'create'), async (req, reply) => {
    const body = parseBody(computedTraitCreate, req.body);
    requireSource(body.sourceId);
    if (propertyTaken(body.sourceId, snakeCase(body.name))) throw apiError('DUPLICATE_PROPERTY', { property: snakeCase(body.name), field: 'name' });
    const parsed = parseComputedTrait(body.definition);
    if (!parsed.ok) throw apiError('INVALID_DEFINITION', { problem: parsed.message, field: parsed.path ? `definition.${parsed.path}` : 'definition' });
    const now = clock();
    const trait: ComputedTrait = { id: `ct_${randomBytes(8).toString('hex')}`, sourceId: body.sourceId, name: body.name, kind: JSON.stringify(body.definition), createdAt: now, updatedAt: now };
    await store.write(change.putComputedTrait(trait));
    return reply.code(201).send(traitView(trait));
  });
  app.get<{ Querystring: { sourceId?: string } }>('/v1/computed-traits', async (req) => ({
    computedTraits: visibleOfSource(req, view.state.computedTraits()).map(traitView),
  }));
  app.get<IdParams>('/v1/computed-traits/:id', async (req) => {
    const trait = view.state.computedTrait(req.params.id) ?? (() => { throw apiError('COMPUTED_TRAIT_NOT_FOUND', { id: req.params.id }); })();
    accessOf(req).requireSource(trait.sourceId);
    return traitView(trait);
  });
  app.delete<IdParams>('/v1/computed-traits/:id', counted.write('computed_trait', 'delete'), async (req, reply) => {
    if (!view.state.computedTrait(req.params.id)) throw apiError('COMPUTED_TRAIT_NOT_FOUND', { id: req.params.id });
    await store.write(change.deleteComputedTrait(req.params.id));
    return reply.code(204).send();
  });
}
