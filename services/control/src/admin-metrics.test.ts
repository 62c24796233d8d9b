import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Lifecycle } from '@switchyard/platform/lifecycle';
import { createLogger } from '@switchyard/platform/logger';
import { createMetricsRegistry, type Registry } from '@switchyard/platform/metrics';
import { createServer } from '@switchyard/platform/http/server';
import { apiError } from './admin-errors.js';
import { adminMetrics, adminResult, countAdminRequests, counted } from './admin-metrics.js';
import { AuthFailureLimiter } from './auth-failure-limiter.js';
import { requireBearerToken } from './auth.js';

const token = 'unit-test-admin-token-0123456789';

/** The service's server (its error handler) with the auth hook, the counting hooks and stand-in routes. */
async function app(limit = 1000) {
  const registry = createMetricsRegistry('control');
  const logger = createLogger({ service: 'test', level: 'silent' });
  const server = createServer({ logger, metrics: registry, readiness: new Lifecycle(logger).readiness });
  const metrics = adminMetrics(registry);
  const tokens = { byHash: () => undefined, currentAsOf: () => Date.now(), whenCurrent: async () => true };
  requireBearerToken(server, { adminToken: token, tokens, limiter: new AuthFailureLimiter({ limit, windowMs: 60_000 }), clock: Date.now, onRefused: (reason) => metrics.authFailures.inc({ reason }) });
  countAdminRequests(server, metrics);
  const outcomes: Record<string, () => never> = {
    invalid: () => { throw apiError('INVALID_FIELD', { problem: 'name is required', field: 'name' }); },
    duplicate: () => { throw apiError('DUPLICATE_ID', { kind: 'source', id: 'x', field: 'id' }); },
    missing: () => { throw apiError('SOURCE_NOT_FOUND', { id: 'x' }); },
    kafka: () => { throw apiError('UNAVAILABLE'); },
    bug: () => { throw new TypeError('oops'); },
  };
  server.post<{ Body: { outcome?: string } }>('/v1/sources', counted.write('source', 'create'), async (req, reply) => {
    outcomes[req.body?.outcome ?? '']?.();
    return reply.code(201).send({});
  });
  server.delete('/v1/sources/:id/write-keys/:key', counted.write('write_key', 'delete'), async () => ({}));
  server.post('/v1/deletions', counted.deletion, async (_req, reply) => reply.code(202).send({}));
  server.get('/v1/sources', async () => ({ sources: [] }));
  await server.ready();
  return { server, registry };
}

async function values(registry: Registry, name: string): Promise<Record<string, number>> {
  const metric = await registry.getSingleMetric(name)!.get();
  return Object.fromEntries(metric.values.map((v) => [Object.values(v.labels).join(','), v.value]));
}

describe('admin API metrics', () => {
  it('maps a status and error code to a result; a 401 is no result', () => {
    const cases: Array<[number, string | undefined, string | undefined]> = [
      [200, undefined, 'ok'], [201, undefined, 'ok'], [202, undefined, 'ok'], [204, undefined, 'ok'],
      [400, 'INVALID_FIELD', 'invalid'], [400, 'UNKNOWN_SOURCE', 'invalid'], [413, 'FST_ERR_CTP_BODY_TOO_LARGE', 'invalid'],
      [400, 'DUPLICATE_ID', 'conflict'], [400, 'DUPLICATE_PROPERTY', 'conflict'], [409, undefined, 'conflict'],
      [404, 'SOURCE_NOT_FOUND', 'not_found'], [500, undefined, 'error'], [503, 'UNAVAILABLE', 'error'],
      [401, 'UNAUTHORIZED', undefined], [403, 'MISSING_SCOPE', undefined], [429, 'TOO_MANY_AUTH_FAILURES', undefined],
    ];
    for (const [status, code, result] of cases) assert.equal(adminResult(status, code), result, `${status} ${code}`);
  });

  it('counts each write by resource, operation and result from the route config; reads are not counted', async () => {
    const { server, registry } = await app();
    const auth = { authorization: `Bearer ${token}` };
    for (const outcome of [undefined, undefined, 'invalid', 'duplicate', 'missing', 'kafka', 'bug']) {
      await server.inject({ method: 'POST', url: '/v1/sources', headers: auth, payload: { outcome } });
    }
    await server.inject({ method: 'POST', url: '/v1/sources', headers: { ...auth, 'content-type': 'application/json' }, payload: '{"name":' });
    await server.inject({ method: 'DELETE', url: '/v1/sources/s/write-keys/k', headers: auth });
    await server.inject({ method: 'POST', url: '/v1/deletions', headers: auth });
    await server.inject({ method: 'GET', url: '/v1/sources', headers: auth });
    const writes = await values(registry, 'control_admin_writes_total');
    assert.deepEqual(
      Object.fromEntries(Object.entries(writes).filter(([, v]) => v > 0)),
      { 'source,create,ok': 2, 'source,create,invalid': 2, 'source,create,conflict': 1, 'source,create,not_found': 1, 'source,create,error': 2, 'write_key,delete,ok': 1 },
    );
    assert.equal(writes['write_key,delete,error'], 0, 'the series of declared routes start at 0');
    assert.equal((await values(registry, 'control_deletion_requests_total'))['ok'], 1);
  });

  it('counts refused tokens by reason, and not as writes', async () => {
    const { server, registry } = await app();
    await server.inject({ method: 'POST', url: '/v1/sources', payload: {} });
    await server.inject({ method: 'GET', url: '/v1/sources', headers: { authorization: 'Basic abc' } });
    await server.inject({ method: 'GET', url: '/v1/sources', headers: { authorization: `Bearer ${token}x` } });
    await server.inject({ method: 'GET', url: '/v1/sources', headers: { authorization: `Bearer ${token}` } });
    assert.deepEqual(await values(registry, 'control_admin_auth_failures_total'), { 'missing': 2, 'invalid': 1, 'rate_limited': 0 });
    assert.equal(Object.values(await values(registry, 'control_admin_writes_total')).reduce((a, b) => a + b, 0), 0);
  });

  it('past the limit, failures are answered 429 with Retry-After through the service\'s error handler, and counted as rate_limited', async () => {
    const { server, registry } = await app(2);
    for (let i = 0; i < 2; i++) assert.equal((await server.inject({ method: 'POST', url: '/v1/sources', payload: {} })).statusCode, 401);
    const res = await server.inject({ method: 'POST', url: '/v1/sources', payload: {} });
    assert.equal(res.statusCode, 429);
    assert.match(String(res.headers['retry-after']), /^(59|60)$/);
    assert.equal(res.json().code, 'TOO_MANY_AUTH_FAILURES');
    assert.equal((await server.inject({ method: 'POST', url: '/v1/sources', headers: { authorization: `Bearer ${token}` }, payload: {} })).statusCode, 201);
    assert.deepEqual(await values(registry, 'control_admin_auth_failures_total'), { 'missing': 2, 'invalid': 0, 'rate_limited': 1 });
    assert.equal((await values(registry, 'control_admin_writes_total'))['source,create,ok'], 1, 'only the authenticated write counts as one');
  });

  it('refuses to register a /v1 write route that declares no metrics', async () => {
    const registry = createMetricsRegistry('control');
    const logger = createLogger({ service: 'test', level: 'silent' });
    const fresh = createServer({ logger, metrics: registry, readiness: new Lifecycle(logger).readiness });
    countAdminRequests(fresh, adminMetrics(registry));
    fresh.get('/v1/things', async () => ({}));
    fresh.post('/healthz-like', async () => ({}));
    assert.throws(() => fresh.post('/v1/things', async () => ({})), /POST \/v1\/things declares no metrics/);
  });
});
