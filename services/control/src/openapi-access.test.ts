import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import Fastify from 'fastify';
import type { ControlDeps } from './control-deps.js';
import { openApiDocument } from './openapi.js';
import { operationScope } from './openapi-access.js';
import { audienceRoutes } from './routes/audiences.js';
import { deadLetterRoutes } from './routes/dead-letters.js';
import { deletionRoutes } from './routes/deletions.js';
import { destinationRoutes } from './routes/destinations.js';
import { liveRoutes } from './routes/live.js';
import { messageRoutes } from './routes/messages.js';
import { notificationEndpointRoutes } from './routes/notification-endpoints.js';
import { replayRoutes } from './routes/replays.js';
import { sourceRoutes } from './routes/sources.js';
import { tokenRoutes } from './routes/tokens.js';
import { usageRoutes } from './routes/usage.js';
import { requiredScope, type Scope } from './scopes.js';

/** Every /v1 route as registered: method, OpenAPI-style path, the scope it declares. */
function registeredRoutes(): Array<{ method: string; path: string; declared: Scope | undefined }> {
  const app = Fastify({ exposeHeadRoutes: false });
  const routes: Array<{ method: string; path: string; declared: Scope | undefined }> = [];
  app.addHook('onRoute', (route) => {
    if (!route.url.startsWith('/v1/')) return;
    for (const method of [route.method].flat()) routes.push({ method, path: route.url.replace(/:(\w+)/g, '{$1}'), declared: route.config?.scope });
  });
  // Registration reads nothing from the collaborators; handlers would, and none runs here.
  const deps = {} as ControlDeps;
  for (const register of [sourceRoutes, destinationRoutes, notificationEndpointRoutes, replayRoutes, deletionRoutes, deadLetterRoutes, audienceRoutes, messageRoutes, usageRoutes, liveRoutes, tokenRoutes]) register(app, deps);
  return routes;
}

describe('the OpenAPI document and the routes agree on access', () => {
  it('documents every /v1 route and nothing else, each with the scope the auth hook requires of it', () => {
    const doc = openApiDocument() as { paths: Record<string, Record<string, { security?: Array<{ bearer: string[] }> }>> };
    const documented = Object.entries(doc.paths).filter(([path]) => path.startsWith('/v1/'))
      .flatMap(([path, item]) => Object.keys(item).filter((m) => m !== 'parameters').map((m) => `${m.toUpperCase()} ${path}`)).sort();
    const routes = registeredRoutes();
    assert.deepEqual(routes.map((r) => `${r.method} ${r.path}`).sort(), documented);
    for (const { method, path, declared } of routes) {
      const enforced = requiredScope(method, declared);
      assert.equal(operationScope(path, method.toLowerCase()), enforced, `${method} ${path}`);
      assert.deepEqual(doc.paths[path]![method.toLowerCase()]!.security, [{ bearer: [enforced] }], `${method} ${path}`);
    }
    assert.ok(routes.length >= 35, `${routes.length} routes`);
  });
});
