import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import Fastify from 'fastify';
import { requireBearerToken } from './auth.js';

const token = 'unit-test-admin-token-0123456789';

async function app() {
  const server = Fastify();
  requireBearerToken(server, token);
  server.get('/v1/sources', async () => ({ sources: ['secret data'] }));
  server.get('/v1/sources/:id', async () => ({ id: 'x' }));
  server.get('/healthz', async () => ({ status: 'ok' }));
  server.setErrorHandler((err: { statusCode?: number; status?: number; code?: string; message: string }, _req, reply) => reply.code(err.status ?? err.statusCode ?? 500).send({ code: err.code, message: err.message }));
  await server.ready();
  return server;
}

describe('requireBearerToken', () => {
  it('guards every spelling of a /v1 route: the matched route decides, not the raw URL', async () => {
    const server = await app();
    for (const url of ['/v1/sources', '/%761/sources', '/v%31/sources', '/v1/%73ources', '/v1/sources?x=1', '/%76%31/sources/abc', '/v1/unknown']) {
      const res = await server.inject({ method: 'GET', url });
      assert.ok([401, 404].includes(res.statusCode), `${url}: ${res.statusCode} ${res.body}`);
      assert.ok(!res.body.includes('secret data'), url);
      if (res.statusCode === 401) assert.equal(res.json().code, 'UNAUTHORIZED');
    }
    assert.equal((await server.inject({ method: 'GET', url: '/%761/sources' })).statusCode, 401);
  });

  it('accepts exactly the token, compared in constant time over digests; open routes stay open', async () => {
    const server = await app();
    const status = async (authorization?: string) => (await server.inject({ method: 'GET', url: '/v1/sources', headers: authorization === undefined ? {} : { authorization } })).statusCode;
    assert.equal(await status(`Bearer ${token}`), 200);
    assert.equal(await status(`bearer   ${token}`), 200);
    for (const wrong of [undefined, '', 'Bearer', `Bearer ${token}x`, `Bearer ${token.slice(0, -1)}`, `Basic ${token}`, token, `Bearer ${token.toUpperCase()}`]) {
      assert.equal(await status(wrong), 401, String(wrong));
    }
    assert.equal((await server.inject({ method: 'GET', url: '/healthz' })).statusCode, 200);
  });
});
