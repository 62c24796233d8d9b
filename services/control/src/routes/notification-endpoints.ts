import type { FastifyInstance } from 'fastify';
import type { Destination } from '@switchyard/platform/config-view/config-state';
import { apiError } from '../admin-errors.js';
import { parseBody } from '../api-schemas.js';
import { counted } from '../admin-metrics.js';
import type { ControlDeps } from '../control-deps.js';
import { change } from '../config-store.js';
import { newNotificationEndpointId } from '../ids.js';
import { isNotificationEndpoint, newNotificationEndpoint, notificationEndpointView } from '../notification-endpoints.js';
import { secretShownOnce } from '../views.js';

type IdParams = { Params: { id: string } };

// Notification endpoints concern every source, so even reading them takes an admin token (a token
// limited to some sources must not learn where others' failures are reported).
const adminRead = { config: { scope: 'admin' as const } };

export function notificationEndpointRoutes(app: FastifyInstance, { view, store, clock, notificationEndpointSchema }: ControlDeps): void {
  const find = (id: string): Destination => {
    const d = view.state.destination(id);
    if (!d || !isNotificationEndpoint(d)) throw apiError('NOTIFICATION_ENDPOINT_NOT_FOUND', { id });
    return d;
  };

  app.post('/v1/notification-endpoints', counted.write('notification_endpoint', 'create'), async (req, reply) => {
    const body = parseBody(notificationEndpointSchema, req.body);
    const id = body.id ?? newNotificationEndpointId();
    if (view.state.destination(id)) throw apiError('DUPLICATE_ID', { kind: 'notification endpoint', id, field: 'id' });
    const { endpoint, secret } = newNotificationEndpoint({ id, url: body.url, eventTypes: body.eventTypes }, clock());
    await store.write(change.putDestination(endpoint));
    // The secret's value is in this response only: receivers verify signatures with it.
    return reply.code(201).send({ ...notificationEndpointView(endpoint), signingSecret: secretShownOnce(secret) });
  });

  app.get('/v1/notification-endpoints', adminRead, async () => ({
    notificationEndpoints: view.state.destinations().filter(isNotificationEndpoint).map(notificationEndpointView),
  }));

  app.get<IdParams>('/v1/notification-endpoints/:id', adminRead, async (req) => notificationEndpointView(find(req.params.id)));

  app.delete<IdParams>('/v1/notification-endpoints/:id', counted.write('notification_endpoint', 'delete'), async (req, reply) => {
    await store.write(change.deleteDestination(find(req.params.id).id));
    return reply.code(204).send();
  });
}
