import type { FastifyInstance } from 'fastify';
import type { Destination } from '@switchyard/platform/config-view/config-state';
import { rotateSigningSecrets, DEFAULT_GRACE_MS } from '@switchyard/platform/signing/standard-webhooks';
import { apiError } from '../admin-errors.js';
import { graceMs, parseBody, secretRotation } from '../api-schemas.js';
import { counted } from '../admin-metrics.js';
import type { ControlDeps } from '../control-deps.js';
import { change } from '../config-store.js';
import { newDestinationId } from '../ids.js';
import { accessOf } from '../scopes.js';
import { enabledAfterRequest } from '../disabled-state.js';
import { isNotificationEndpoint } from '../notification-endpoints.js';
import { destinationView, secretShownOnce, signingAfter, storedFilter, storedWebhooks, withNewSecret } from '../views.js';

type IdParams = { Params: { id: string } };

export function destinationRoutes(app: FastifyInstance, { view, store, clock, destinationSchemas }: ControlDeps): void {
  // Notification endpoints are stored as destinations of their own type, managed by their own routes.
  const find = (id: string): Destination => {
    const d = view.state.destination(id);
    if (!d || isNotificationEndpoint(d)) throw apiError('DESTINATION_NOT_FOUND', { id });
    return d;
  };

  app.post('/v1/destinations', counted.write('destination', 'create'), async (req, reply) => {
    const body = parseBody(destinationSchemas.create, req.body);
    if (!view.state.source(body.sourceId)) throw apiError('UNKNOWN_SOURCE', { id: body.sourceId, field: 'sourceId' });
    const now = clock();
    const { created, ...signing } = signingAfter({ standardSignatures: false, signingSecrets: [] }, body.signing, now);
    const destination: Destination = {
      id: body.id ?? newDestinationId(), sourceId: body.sourceId, name: body.name, type: body.type, enabled: body.enabled,
      sharedSecret: body.settings.sharedSecret ?? null, webhooks: storedWebhooks(body.settings.webhooks), createdAt: now, updatedAt: now,
      filter: storedFilter(body.filter), ...signing, retry: body.retry ?? null,
      rateLimit: body.rateLimit ?? null, disabledReason: null, disabledAt: null, notificationTypes: [],
    };
    if (view.state.destination(destination.id)) throw apiError('DUPLICATE_ID', { kind: 'destination', id: destination.id, field: 'id' });
    await store.write(change.putDestination(destination));
    return reply.code(201).send(withNewSecret(destinationView(destination, now), created));
  });

  app.get<{ Querystring: { sourceId?: string } }>('/v1/destinations', async (req) => {
    const { sourceId } = req.query;
    const access = accessOf(req);
    if (sourceId) access.requireSource(sourceId);
    const list = sourceId ? view.state.destinationsOfSource(sourceId) : access.visible(view.state.destinations().filter((d) => !isNotificationEndpoint(d)), (d) => d.sourceId);
    const now = clock();
    return { destinations: list.map((d) => destinationView(d, now, access.credentials)) };
  });

  app.get<IdParams>('/v1/destinations/:id', async (req) => {
    const access = accessOf(req);
    const destination = find(req.params.id);
    access.requireSource(destination.sourceId);
    return destinationView(destination, clock(), access.credentials);
  });

  app.patch<IdParams>('/v1/destinations/:id', counted.write('destination', 'update'), async (req) => {
    const current = find(req.params.id);
    const body = parseBody(destinationSchemas.patch, req.body);
    const now = clock();
    const { created, ...signing } = signingAfter(current, body.signing, now);
    const next: Destination = {
      ...current,
      name: body.name ?? current.name,
      ...enabledAfterRequest(current, body.enabled),
      sharedSecret: body.settings?.sharedSecret === undefined ? current.sharedSecret : body.settings.sharedSecret,
      webhooks: body.settings?.webhooks ? storedWebhooks(body.settings.webhooks, current.webhooks) : current.webhooks,
      filter: body.filter === undefined ? current.filter : storedFilter(body.filter),
      ...signing,
      retry: body.retry === undefined ? current.retry : body.retry,
      rateLimit: body.rateLimit === undefined ? current.rateLimit : body.rateLimit,
      updatedAt: now,
    };
    await store.write(change.putDestination(next));
    return withNewSecret(destinationView(next, now), created);
  });

  // Rotation of the Standard Webhooks secret: a new current one, the previous one signing beside it
  // for the grace period, so receivers switch at their pace.
  app.post<IdParams>('/v1/destinations/:id/secrets/rotate', counted.write('signing_secret', 'create'), async (req, reply) => {
    const current = find(req.params.id);
    const body = parseBody(secretRotation, req.body);
    if (!current.standardSignatures) throw apiError('SIGNING_NOT_ENABLED', { field: 'signing.standard' });
    const now = clock();
    const { secrets, created } = rotateSigningSecrets(current.signingSecrets, now, body.gracePeriod === undefined ? DEFAULT_GRACE_MS : graceMs(body.gracePeriod));
    const next: Destination = { ...current, signingSecrets: secrets, updatedAt: now };
    await store.write(change.putDestination(next));
    return reply.code(201).send({ signingSecret: secretShownOnce(created), destination: destinationView(next, now) });
  });

  app.delete<IdParams>('/v1/destinations/:id', counted.write('destination', 'delete'), async (req, reply) => {
    await store.write(change.deleteDestination(find(req.params.id).id));
    return reply.code(204).send();
  });
}
