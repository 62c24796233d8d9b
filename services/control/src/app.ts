import type { FastifyInstance } from 'fastify';
import { countAdminRequests } from './admin-metrics.js';
import type { AuthFailureLimiter } from './auth-failure-limiter.js';
import { requireBearerToken } from './auth.js';
import type { ControlDeps } from './control-deps.js';
import { openApiDocument } from './openapi.js';
import { audienceRoutes } from './routes/audiences.js';
import { deadLetterRoutes } from './routes/dead-letters.js';
import { debuggerRoutes } from './routes/debugger.js';
import { deletionRoutes } from './routes/deletions.js';
import { destinationRoutes } from './routes/destinations.js';
import { messageRoutes } from './routes/messages.js';
import { notificationEndpointRoutes } from './routes/notification-endpoints.js';
import { replayRoutes } from './routes/replays.js';
import { liveRoutes } from './routes/live.js';
import { sourceRoutes } from './routes/sources.js';
import { tokenRoutes } from './routes/tokens.js';
import { usageRoutes } from './routes/usage.js';

/** Adds the admin API to the service's server. */
export function registerAdminApi(app: FastifyInstance, deps: ControlDeps, auth: { adminToken: string; limiter: AuthFailureLimiter }): void {
  const { view } = deps;
  requireBearerToken(app, {
    ...auth,
    tokens: { byHash: (hash) => view.state.adminTokenByHash(hash), currentAsOf: () => view.currentAsOf(), whenCurrent: (since, ms) => view.whenCurrent(since, ms) },
    clock: deps.clock,
    onRefused: (reason) => deps.metrics.authFailures.inc({ reason }),
    onForbidden: (scope) => deps.metrics.forbidden.inc({ scope }),
  });
  // Before the routes: it checks each route as it is added.
  countAdminRequests(app, deps.metrics);
  const openapi = openApiDocument();
  app.get('/openapi.json', async () => openapi);
  debuggerRoutes(app);
  sourceRoutes(app, deps);
  destinationRoutes(app, deps);
  notificationEndpointRoutes(app, deps);
  replayRoutes(app, deps);
  deletionRoutes(app, deps);
  deadLetterRoutes(app, deps);
  audienceRoutes(app, deps);
  messageRoutes(app, deps);
  usageRoutes(app, deps);
  liveRoutes(app, deps);
  tokenRoutes(app, deps);
}
