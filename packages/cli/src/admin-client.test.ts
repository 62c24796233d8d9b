import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { AdminApiError, AdminClient, AdminConnectionError } from './admin-client.js';
import { startFakeAdminApi, type FakeAdminApi } from './test-support/fake-admin-api.js';

let api: FakeAdminApi;
before(async () => {
  api = await startFakeAdminApi();
});
after(async () => {
  await api.close();
});

describe('AdminClient', () => {
  it('keeps a path prefix of the base URL and drops its trailing slash', async () => {
    api.on('GET', '/admin/v1/sources', { status: 200, body: { sources: [] } });
    const client = new AdminClient({ baseUrl: `${api.url}/admin/`, token: 't' });
    assert.deepEqual(await client.listSources(), { sources: [] });
    assert.equal(api.requests.at(-1)?.path, '/admin/v1/sources');
  });

  it('encodes the dead-letter filters as a query, leaving out what is not given', async () => {
    const client = new AdminClient({ baseUrl: api.url, token: 't' });
    api.on('GET', '/v1/dead-letters?reason=a%26b+c&since=2025-01-02T03%3A04%3A05.000%2B02%3A00&limit=5', { status: 200, body: { deadLetters: [], total: 3 } });
    assert.deepEqual(await client.listDeadLetters({ reason: 'a&b c', since: '2025-01-02T03:04:05.000+02:00', limit: 5 }), { deadLetters: [], total: 3 });
    assert.equal(api.requests.at(-1)?.path, '/v1/dead-letters?reason=a%26b+c&since=2025-01-02T03%3A04%3A05.000%2B02%3A00&limit=5');
  });

  it('sends the replay ids and the deletion request as JSON bodies', async () => {
    const client = new AdminClient({ baseUrl: api.url, token: 't' });
    api.on('POST', '/v1/dead-letters/replay', { status: 202, body: { replayed: ['a'], notFound: [] } });
    assert.deepEqual(await client.replayDeadLetters(['a']), { replayed: ['a'], notFound: [] });
    assert.deepEqual(api.requests.at(-1)?.body, { ids: ['a'] });
    const created = { requestId: 'del_1', userId: 'u', notifications: 0, sourceIds: [] };
    api.on('POST', '/v1/deletions', { status: 202, body: created });
    assert.deepEqual(await client.requestDeletion({ userId: 'u' }), created);
    assert.deepEqual(api.requests.at(-1)?.body, { userId: 'u' });
  });

  it('sends audience and computed trait requests, the source filter as a query', async () => {
    const client = new AdminClient({ baseUrl: api.url, token: 't' });
    api.on('GET', '/v1/audiences?sourceId=src%201%26x', { status: 200, body: { audiences: [] } });
    assert.deepEqual(await client.listAudiences({ sourceId: 'src 1&x' }), { audiences: [] });
    assert.equal(api.requests.at(-1)?.path, '/v1/audiences?sourceId=src%201%26x');
    const condition = { trait: 'plan', op: 'exists' };
    const audience = { id: 'aud_1', sourceId: 's', name: 'Pro', property: 'pro', condition, createdAt: 't', updatedAt: 't' };
    api.on('PATCH', '/v1/audiences/aud_1', { status: 200, body: audience });
    assert.deepEqual(await client.updateAudience('aud_1', { condition }), audience);
    assert.deepEqual(api.requests.at(-1)?.body, { condition });
    api.on('DELETE', '/v1/computed-traits/ct%2F1', { status: 204 });
    assert.equal(await client.deleteComputedTrait('ct/1'), undefined);
    assert.equal(api.requests.at(-1)?.method, 'DELETE');
    api.on('GET', '/v1/computed-traits', { status: 200, body: { computedTraits: [] } });
    assert.deepEqual(await client.listComputedTraits(), { computedTraits: [] });
  });

  it('throws AdminApiError with the status, code, message and field', async () => {
    api.on('PATCH', '/v1/destinations/d', { status: 400, body: { code: 'INVALID_URL', message: 'bad', field: 'settings.webhooks[0].url' } });
    const client = new AdminClient({ baseUrl: api.url, token: 't' });
    await assert.rejects(client.updateDestination('d', { name: 'x' }), (e: unknown) => {
      assert.ok(e instanceof AdminApiError);
      assert.deepEqual({ status: e.status, code: e.code, message: e.message, field: e.field }, { status: 400, code: 'INVALID_URL', message: 'bad', field: 'settings.webhooks[0].url' });
      return true;
    });
  });

  it('reports a 401 as an AdminApiError', async () => {
    api.on('GET', '/v1/sources', { status: 401, body: { code: 'UNAUTHORIZED', message: 'the admin token is not valid' } });
    const client = new AdminClient({ baseUrl: api.url, token: 'wrong' });
    await assert.rejects(client.listSources(), (e: unknown) => e instanceof AdminApiError && e.status === 401 && e.code === 'UNAUTHORIZED');
  });

  it('turns a timeout into AdminConnectionError TIMEOUT', async () => {
    const never: typeof fetch = (_input, init) =>
      new Promise((_resolve, reject) => init?.signal?.addEventListener('abort', () => reject(init.signal?.reason)));
    const client = new AdminClient({ baseUrl: 'http://127.0.0.1:9', token: 't', fetch: never, timeoutMs: 10 });
    await assert.rejects(client.getSource('s'), (e: unknown) => e instanceof AdminConnectionError && e.code === 'TIMEOUT');
  });
});
