// switchyard notification-endpoints, run against a fake admin API.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { NotificationEndpoint, NotificationEndpointCreated } from './admin-client.js';
import { api, cli, ok, sent, useFakeAdminApi } from './test-support/cli-harness.js';

const endpoint: NotificationEndpoint = {
  id: 'nep_1',
  url: 'https://ops.example/switchyard',
  eventTypes: ['destination.disabled', 'destination.failing'],
  enabled: true,
  createdAt: '2026-11-29T10:00:00.000Z',
  updatedAt: '2026-11-29T10:00:01.000Z',
};
const created: NotificationEndpointCreated = { ...endpoint, signingSecret: { id: 'whs_0a1b', secret: 'whsec_c2VjcmV0LWJ5dGVz', createdAt: '2026-11-29T10:00:00.000Z' } };

useFakeAdminApi();

describe('notification-endpoints', () => {
  it('create sends the URL and the comma-separated event types, and prints the whsec_ secret once after the endpoint', async () => {
    api.on('POST', '/v1/notification-endpoints', { status: 201, body: created });
    const r = await cli(['notification-endpoints', 'create', '--url', 'https://ops.example/switchyard', '--event-types', 'destination.disabled, destination.failing,destination.disabled']);
    ok(r);
    sent('POST', '/v1/notification-endpoints', { url: 'https://ops.example/switchyard', eventTypes: ['destination.disabled', 'destination.failing'] });
    assert.equal(r.stdout, [
      'id:          nep_1',
      'url:         https://ops.example/switchyard',
      'event types: destination.disabled',
      '             destination.failing',
      'enabled:     yes',
      'created:     2026-11-29T10:00:00.000Z',
      'updated:     2026-11-29T10:00:01.000Z',
      '',
      'new Standard Webhooks secret whs_0a1b (shown only now, keep it safe):',
      'whsec_c2VjcmV0LWJ5dGVz',
      '',
    ].join('\n'));
  });

  it('create passes --id; --json prints the answer as is, secret included', async () => {
    api.on('POST', '/v1/notification-endpoints', { status: 201, body: created });
    const r = await cli(['notification-endpoints', 'create', '--id', 'ops', '--url', 'https://ops.example/switchyard', '--event-types', 'replay.completed', '--json']);
    ok(r);
    sent('POST', '/v1/notification-endpoints', { id: 'ops', url: 'https://ops.example/switchyard', eventTypes: ['replay.completed'] });
    assert.deepEqual(JSON.parse(r.stdout), created);
  });

  it('create refuses an unknown or empty event type list and a missing --url as usage errors, sending nothing', async () => {
    const bad = [
      ['notification-endpoints', 'create', '--url', 'https://a.example/', '--event-types', 'destination.failing,destination.deleted'],
      ['notification-endpoints', 'create', '--url', 'https://a.example/', '--event-types', ' , '],
      ['notification-endpoints', 'create', '--url', 'https://a.example/'],
      ['notification-endpoints', 'create', '--event-types', 'replay.completed'],
    ];
    for (const argv of bad) {
      const r = await cli(argv);
      assert.equal(r.code, 2, argv.join(' '));
      assert.match(r.stderr, /error: /);
    }
    assert.match((await cli(bad[0]!)).stderr, /unknown event type "destination\.deleted": use destination\.failing, destination\.disabled, message\.dead_lettered, replay\.completed/);
    assert.equal(api.requests.length, 0);
  });

  it('list prints a table without secrets; --json the API body', async () => {
    const body = { notificationEndpoints: [endpoint, { ...endpoint, id: 'nep_22', url: 'https://b.example/n', eventTypes: ['message.dead_lettered'] }] };
    api.on('GET', '/v1/notification-endpoints', { status: 200, body });
    const r = await cli(['notification-endpoints', 'list']);
    ok(r);
    sent('GET', '/v1/notification-endpoints');
    assert.equal(r.stdout, [
      'ID      URL                             EVENT-TYPES',
      'nep_1   https://ops.example/switchyard  destination.disabled,destination.failing',
      'nep_22  https://b.example/n             message.dead_lettered',
      '',
    ].join('\n'));
    api.reset();
    api.on('GET', '/v1/notification-endpoints', { status: 200, body });
    assert.deepEqual(JSON.parse((await cli(['--json', 'notification-endpoints', 'list'])).stdout), body);
  });

  it('get shows one endpoint; an unknown id is the API\'s 404', async () => {
    api.on('GET', '/v1/notification-endpoints/nep_1', { status: 200, body: endpoint });
    const r = await cli(['notification-endpoints', 'get', 'nep_1']);
    ok(r);
    sent('GET', '/v1/notification-endpoints/nep_1');
    assert.match(r.stdout, /^id: {10}nep_1\nurl: {9}https:\/\/ops\.example\/switchyard\n/);
    assert.doesNotMatch(r.stdout, /whsec_/);
    api.reset();
    api.on('GET', '/v1/notification-endpoints/nope', { status: 404, body: { code: 'NOT_FOUND', message: 'notification endpoint nope not found' } });
    const missing = await cli(['notification-endpoints', 'get', 'nope']);
    assert.equal(missing.code, 1);
    assert.equal(missing.stderr, 'error NOT_FOUND: notification endpoint nope not found\n');
  });

  it('delete sends DELETE with the id encoded and says so; nothing with --json', async () => {
    api.on('DELETE', '/v1/notification-endpoints/a%2Fb', { status: 204 });
    const r = await cli(['notification-endpoints', 'delete', 'a/b']);
    ok(r);
    sent('DELETE', '/v1/notification-endpoints/a%2Fb');
    assert.equal(r.stdout, 'deleted notification endpoint a/b\n');
    api.reset();
    api.on('DELETE', '/v1/notification-endpoints/nep_1', { status: 204 });
    const json = await cli(['--json', 'notification-endpoints', 'delete', 'nep_1']);
    ok(json);
    assert.equal(json.stdout, '');
  });
});
