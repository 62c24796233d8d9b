import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, it } from 'node:test';
import Fastify from 'fastify';
import type { AdminToken } from '@switchyard/platform/config-view/config-state';
import { AuthFailureLimiter } from './auth-failure-limiter.js';
import { requireBearerToken, type AuthRefusal, type TokenLookup } from './auth.js';
import { accessOf } from './scopes.js';

const token = 'unit-test-admin-token-0123456789';
const sha = (text: string) => createHash('sha256').update(text).digest();

/** A stand-in for the config view's tokens: a map, and a view as current as `lagMs` behind the clock. */
function fakeTokens(now: () => number) {
  const stored = new Map<string, AdminToken>();
  const state = { lagMs: 0 as number | undefined, waited: 0, onWait: () => {} };
  const lookup: TokenLookup = {
    byHash: (hash) => stored.get(hash.toString('hex')),
    currentAsOf: () => (state.lagMs === undefined ? undefined : now() - state.lagMs),
    async whenCurrent(since) { state.waited++; state.onWait(); return now() - (state.lagMs ?? Infinity) > since; },
  };
  const add = (id: string, secret: string, scopes: string[], sourceIds: string[] | null = null) =>
    stored.set(sha(secret).toString('hex'), { id, name: id, scopes, sourceIds, tokenHash: sha(secret).toString('hex'), createdAt: 0 });
  const revoke = (secret: string) => stored.delete(sha(secret).toString('hex'));
  return { lookup, add, revoke, state };
}

async function app(opts: { limit?: number } = {}) {
  let now = 1_000_000;
  const clock = () => now;
  const tokens = fakeTokens(clock);
  const refusals: AuthRefusal[] = [];
  const server = Fastify();
  requireBearerToken(server, { adminToken: token, tokens: tokens.lookup, limiter: new AuthFailureLimiter({ limit: opts.limit ?? 1000, windowMs: 60_000 }), clock, onRefused: (r) => refusals.push(r) });
  server.get('/v1/sources', async (req) => ({ sources: ['secret data'], payloads: accessOf(req).payloads }));
  server.get('/v1/sources/:id', async () => ({ id: 'x' }));
  server.post('/v1/sources', async () => ({ created: true }));
  server.get('/v1/tokens', { config: { scope: 'admin' } }, async () => ({ tokens: [] }));
  server.get('/healthz', async () => ({ status: 'ok' }));
  server.setErrorHandler((err: { statusCode?: number; status?: number; code?: string; message: string; toJSON?: () => unknown }, _req, reply) =>
    reply.code(err.status ?? err.statusCode ?? 500).send(err.toJSON?.() ?? { code: err.code, message: err.message }));
  await server.ready();
  const call = (method: 'GET' | 'POST', url: string, secret?: string) => server.inject({ method, url, headers: secret === undefined ? {} : { authorization: `Bearer ${secret}` } });
  return { server, tokens, refusals, call, advance: (ms: number) => { now += ms; } };
}

describe('requireBearerToken', () => {
  it('guards every spelling of a /v1 route: the matched route decides, not the raw URL', async () => {
    const { server } = await app();
    for (const url of ['/v1/sources', '/%761/sources', '/v%31/sources', '/v1/%73ources', '/v1/sources?x=1', '/%76%31/sources/abc', '/v1/unknown']) {
      const res = await server.inject({ method: 'GET', url });
      assert.ok([401, 404].includes(res.statusCode), `${url}: ${res.statusCode} ${res.body}`);
      assert.ok(!res.body.includes('secret data'), url);
      if (res.statusCode === 401) assert.equal(res.json().code, 'UNAUTHORIZED');
    }
    assert.equal((await server.inject({ method: 'GET', url: '/%761/sources' })).statusCode, 401);
  });

  it('accepts exactly the token, compared in constant time over digests; open routes stay open', async () => {
    const { server } = await app();
    const status = async (authorization?: string) => (await server.inject({ method: 'GET', url: '/v1/sources', headers: authorization === undefined ? {} : { authorization } })).statusCode;
    assert.equal(await status(`Bearer ${token}`), 200);
    assert.equal(await status(`bearer   ${token}`), 200);
    for (const wrong of [undefined, '', 'Bearer', `Bearer ${token}x`, `Bearer ${token.slice(0, -1)}`, `Basic ${token}`, token, `Bearer ${token.toUpperCase()}`]) {
      assert.equal(await status(wrong), 401, String(wrong));
    }
    assert.equal((await server.inject({ method: 'GET', url: '/healthz' })).statusCode, 200);
  });

  it('stored tokens: the scope decides (403 MISSING_SCOPE naming it), revoked ones are 401', async () => {
    const { tokens, call } = await app();
    tokens.add('tok_r', 'read-secret-0123456789', ['read']);
    tokens.add('tok_m', 'meta-secret-0123456789', ['metadata']);
    tokens.add('tok_a', 'admin-secret-0123456789', ['admin']);
    tokens.add('tok_f', 'future-secret-0123456789', ['superuser']);
    const table: Array<[string, 'GET' | 'POST', string, number, string?]> = [
      ['read-secret-0123456789', 'GET', '/v1/sources', 200], ['read-secret-0123456789', 'POST', '/v1/sources', 403, 'admin'], ['read-secret-0123456789', 'GET', '/v1/tokens', 403, 'admin'],
      ['meta-secret-0123456789', 'GET', '/v1/sources', 200], ['meta-secret-0123456789', 'POST', '/v1/sources', 403, 'admin'],
      ['admin-secret-0123456789', 'GET', '/v1/sources', 200], ['admin-secret-0123456789', 'POST', '/v1/sources', 200], ['admin-secret-0123456789', 'GET', '/v1/tokens', 200],
      [token, 'GET', '/v1/tokens', 200],
      // A scope this version does not know grants nothing.
      ['future-secret-0123456789', 'GET', '/v1/sources', 403, 'metadata'],
    ];
    for (const [secret, method, url, status, scope] of table) {
      const res = await call(method, url, secret);
      assert.equal(res.statusCode, status, `${secret.slice(0, 5)} ${method} ${url}: ${res.body}`);
      if (scope) assert.deepEqual({ code: res.json().code, scope: res.json().scope }, { code: 'MISSING_SCOPE', scope });
    }
    assert.equal((await call('GET', '/v1/sources', 'meta-secret-0123456789')).json().payloads, false);
    assert.equal((await call('GET', '/v1/sources', 'read-secret-0123456789')).json().payloads, true);
    tokens.revoke('read-secret-0123456789');
    assert.equal((await call('GET', '/v1/sources', 'read-secret-0123456789')).statusCode, 401);
  });

  it('uses a stored token only with a view current to within a second; a revocation read while waiting wins; behind or not loaded: 503', async () => {
    const { tokens, call } = await app();
    tokens.add('tok_r', 'read-secret-0123456789', ['read']);
    tokens.state.lagMs = 5000;
    assert.equal((await call('GET', '/v1/sources', 'read-secret-0123456789')).json().code, 'CONFIG_BEHIND');
    // The view catches up while the request waits, and what it reads is the revocation.
    tokens.state.lagMs = 0;
    tokens.state.onWait = () => tokens.revoke('read-secret-0123456789');
    assert.equal((await call('GET', '/v1/sources', 'read-secret-0123456789')).statusCode, 401);
    tokens.state.lagMs = undefined;
    assert.equal((await call('GET', '/v1/sources', 'other-secret-0123456789')).statusCode, 503, 'not loaded yet: cannot say the token is unknown');
    assert.equal((await call('GET', '/v1/sources', token)).statusCode, 200, 'SWITCHYARD_ADMIN_TOKEN needs no view');
  });

  it('rate limits failures per address with 429 and Retry-After; a valid token is never limited', async () => {
    const { call, refusals, advance } = await app({ limit: 3 });
    for (let i = 0; i < 3; i++) assert.equal((await call('GET', '/v1/sources', `wrong-${i}`)).statusCode, 401);
    const limited = await call('GET', '/v1/sources');
    assert.equal(limited.statusCode, 429);
    assert.equal(limited.json().code, 'TOO_MANY_AUTH_FAILURES');
    assert.equal(limited.headers['retry-after'], '60');
    assert.equal((await call('GET', '/v1/sources', token)).statusCode, 200, 'the right token from the same address');
    advance(30_000);
    assert.equal((await call('GET', '/v1/sources', 'wrong')).headers['retry-after'], '30');
    advance(30_000);
    assert.equal((await call('GET', '/v1/sources', 'wrong')).statusCode, 401, 'a new window');
    assert.deepEqual(refusals, ['invalid', 'invalid', 'invalid', 'rate_limited', 'rate_limited', 'invalid']);
  });
});
