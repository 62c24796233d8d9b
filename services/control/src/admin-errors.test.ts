import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance, InjectOptions } from 'fastify';
import { catalogueRows, documentedErrors } from '@switchyard/platform/test-support/error-docs';
import { adminErrors } from './admin-errors.js';
import { openApiDocument } from './openapi.js';
import { ADMIN_TOKEN, adminApp } from './test-support/admin-app.js';

const auth = { authorization: `Bearer ${ADMIN_TOKEN}` };

/** The body of an error answer, checked to be `{code, message, …}` with a code of the catalogue answered with its status. */
function refusal(res: { statusCode: number; headers: Record<string, unknown>; body: string }, what: string): { code: string; message: string } & Record<string, unknown> {
  assert.match(String(res.headers['content-type']), /^application\/json/, what);
  const body = JSON.parse(res.body) as Record<string, unknown>;
  assert.equal(typeof body.code, 'string', `${what}: ${res.body}`);
  assert.equal(typeof body.message, 'string', `${what}: ${res.body}`);
  const code = body.code as keyof typeof adminErrors.entries;
  assert.ok(adminErrors.codes.includes(code), `${what}: ${code} is not in the catalogue`);
  assert.equal(res.statusCode, adminErrors.entries[code].status, `${what}: ${code} answered with ${res.statusCode}`);
  assert.deepEqual(Object.keys(body).filter((k) => !['code', 'message', 'field', 'scope'].includes(k)), [], `${what}: ${res.body}`);
  return body as { code: string; message: string } & Record<string, unknown>;
}

describe('the admin API\'s error catalogue', () => {
  it('lists every code with its status in docs/admin-api.md ("Errors"), and no other', () => {
    assert.deepEqual(documentedErrors(new URL('../../../docs/admin-api.md', import.meta.url)), catalogueRows(adminErrors));
  });

  it('is the enum of Error.code in the OpenAPI document', () => {
    const schemas = (openApiDocument() as { components: { schemas: { Error: { properties: { code: { enum: string[] } } } } } }).components.schemas;
    assert.deepEqual(schemas.Error.properties.code.enum, [...adminErrors.codes]);
  });

  it('builds each message from its parameters, and details and field into the body', () => {
    assert.deepEqual(adminErrors.error('SOURCE_NOT_FOUND', { id: 'src_1' }).toJSON(), { code: 'SOURCE_NOT_FOUND', message: 'no source "src_1"' });
    assert.deepEqual(adminErrors.error('MISSING_SCOPE', { scope: 'admin' }).toJSON(), { code: 'MISSING_SCOPE', message: 'this token lacks the admin scope this request needs', scope: 'admin' });
    const refused = adminErrors.error('UNKNOWN_SOURCE', { id: 's', field: 'sourceIds[1]' });
    assert.deepEqual([refused.status, refused.retriable, refused.toJSON()], [400, false, { code: 'UNKNOWN_SOURCE', message: 'no source "s"', field: 'sourceIds[1]' }]);
    assert.equal(adminErrors.error('CONFIG_BEHIND').retriable, true);
  });
});

describe('admin API error answers', () => {
  let app: FastifyInstance;
  before(async () => { app = await adminApp({ authFailureLimit: 3 }); });
  after(() => app.close());

  const cases: Array<[what: string, request: InjectOptions, code: string]> = [
    ['an unknown route', { method: 'GET', url: '/nope' }, 'NOT_FOUND'],
    ['an unknown /v1 route with a token', { method: 'GET', url: '/v1/nope', headers: auth }, 'NOT_FOUND'],
    ['a debugger file the page does not have', { method: 'GET', url: '/debugger/nope.js' }, 'NOT_FOUND'],
    ['no token', { method: 'GET', url: '/v1/sources' }, 'UNAUTHORIZED'],
    ['a stored token while the configuration is not loaded', { method: 'GET', url: '/v1/sources', headers: { authorization: 'Bearer syt_not-checkable' } }, 'CONFIG_BEHIND'],
    ['an unknown source', { method: 'GET', url: '/v1/sources/src_x', headers: auth }, 'SOURCE_NOT_FOUND'],
    ['an unknown write key', { method: 'DELETE', url: '/v1/sources/src_x/write-keys/k', headers: auth }, 'SOURCE_NOT_FOUND'],
    ['an unknown destination', { method: 'GET', url: '/v1/destinations/dst_x', headers: auth }, 'DESTINATION_NOT_FOUND'],
    ['an unknown notification endpoint', { method: 'GET', url: '/v1/notification-endpoints/nep_x', headers: auth }, 'NOTIFICATION_ENDPOINT_NOT_FOUND'],
    ['an unknown audience', { method: 'GET', url: '/v1/audiences/aud_x', headers: auth }, 'AUDIENCE_NOT_FOUND'],
    ['an unknown computed trait', { method: 'GET', url: '/v1/computed-traits/ct_x', headers: auth }, 'COMPUTED_TRAIT_NOT_FOUND'],
    ['an unknown dead letter', { method: 'GET', url: '/v1/dead-letters/dl_x', headers: auth }, 'DEAD_LETTER_NOT_FOUND'],
    ['an unknown message', { method: 'GET', url: '/v1/messages/m-1', headers: auth }, 'MESSAGE_NOT_FOUND'],
    ['an unknown token', { method: 'DELETE', url: '/v1/tokens/tok_x', headers: auth }, 'TOKEN_NOT_FOUND'],
    ['JSON that does not parse', { method: 'POST', url: '/v1/sources', headers: { ...auth, 'content-type': 'application/json' }, payload: '{"name":' }, 'INVALID_JSON'],
    ['JSON that sets __proto__', { method: 'POST', url: '/v1/sources', headers: { ...auth, 'content-type': 'application/json' }, payload: '{"name":"x","__proto__":{"a":1}}' }, 'INVALID_JSON'],
    ['a field the route does not take', { method: 'POST', url: '/v1/sources', headers: auth, payload: { name: 'x', colour: 'red' } }, 'UNKNOWN_FIELD'],
    ['a body the route needs, sent empty', { method: 'POST', url: '/v1/sources', headers: { ...auth, 'content-type': 'application/json' }, payload: '' }, 'INVALID_FIELD'],
    ['a body that is not JSON', { method: 'POST', url: '/v1/sources', headers: { ...auth, 'content-type': 'text/plain' }, payload: 'name=x' }, 'UNSUPPORTED_MEDIA_TYPE'],
    ['a body over the limit', { method: 'POST', url: '/v1/sources', headers: { ...auth, 'content-type': 'application/json' }, payload: JSON.stringify({ name: 'x'.repeat(1 << 20) }) }, 'BODY_TOO_LARGE'],
    ['a destination of an unknown source', { method: 'POST', url: '/v1/destinations', headers: auth, payload: { sourceId: 'src_x', type: 'webhooks', settings: { webhooks: [{ url: 'https://hooks.example.com/' }] } } }, 'UNKNOWN_SOURCE'],
    ['a webhook URL with a scheme not allowed', { method: 'POST', url: '/v1/destinations', headers: auth, payload: { sourceId: 'src_x', type: 'webhooks', settings: { webhooks: [{ url: 'ftp://hooks.example.com/' }] } } }, 'INVALID_URL_SCHEME'],
    ['a URL path that does not decode', { method: 'GET', url: '/v1/sources/%E0%A4%A', headers: auth }, 'BAD_REQUEST'],
  ];
  for (const [what, request, code] of cases) {
    it(`${what}: ${code}, as {code, message}`, async () => {
      assert.equal(refusal(await app.inject(request), what).code, code);
    });
  }

  it('a field names the offending field; MISSING_SCOPE-style details come only from the catalogue', async () => {
    const body = refusal(await app.inject({ method: 'POST', url: '/v1/sources', headers: auth, payload: { name: 'x', colour: 'red' } }), 'unknown field');
    assert.deepEqual(body, { code: 'UNKNOWN_FIELD', message: 'unknown field colour', field: 'colour' });
  });

  it('past the failure limit: TOO_MANY_AUTH_FAILURES with Retry-After', async () => {
    const fresh = await adminApp({ authFailureLimit: 1 });
    try {
      refusal(await fresh.inject({ method: 'GET', url: '/v1/sources' }), 'first failure');
      const res = await fresh.inject({ method: 'GET', url: '/v1/sources' });
      assert.equal(refusal(res, 'second failure').code, 'TOO_MANY_AUTH_FAILURES');
      assert.ok(Number(res.headers['retry-after']) > 0);
    } finally {
      await fresh.close();
    }
  });
});

describe('a request that needs no body is accepted with an empty body, whatever its Content-Type', () => {
  let app: FastifyInstance;
  before(async () => { app = await adminApp(); });
  after(() => app.close());

  for (const contentType of ['application/json', 'application/json; charset=utf-8', 'text/plain', 'application/x-www-form-urlencoded', 'nonsense']) {
    it(`DELETE /v1/tokens/{id} with Content-Type ${contentType} and no body reaches the route (404 TOKEN_NOT_FOUND, not 400 or 415)`, async () => {
      const res = await app.inject({ method: 'DELETE', url: '/v1/tokens/tok_x', headers: { ...auth, 'content-type': contentType } });
      assert.equal(refusal(res, contentType).code, 'TOKEN_NOT_FOUND');
    });

    it(`POST …/secrets/rotate (an action whose body is optional) with Content-Type ${contentType} and no body reaches the route`, async () => {
      const res = await app.inject({ method: 'POST', url: '/v1/destinations/dst_x/secrets/rotate', headers: { ...auth, 'content-type': contentType } });
      assert.equal(refusal(res, contentType).code, 'DESTINATION_NOT_FOUND');
    });

    it(`GET with Content-Type ${contentType} and no body is answered`, async () => {
      const res = await app.inject({ method: 'GET', url: '/v1/sources', headers: { ...auth, 'content-type': contentType } });
      assert.equal(res.statusCode, 200, res.body);
    });
  }

  it('a JSON body is still read under the same parser', async () => {
    const res = await app.inject({ method: 'POST', url: '/v1/destinations/dst_x/secrets/rotate', headers: { ...auth, 'content-type': 'application/json' }, payload: '{"gracePeriod":"1h"}' });
    assert.equal(refusal(res, 'rotate with a body').code, 'DESTINATION_NOT_FOUND');
  });
});
