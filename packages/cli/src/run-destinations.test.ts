// switchyard destinations and signing-secrets, run against a fake admin API.
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import type { Destination } from './admin-client.js';
import { api, cli, ok, sent, useFakeAdminApi } from './test-support/cli-harness.js';

const destination: Destination = {
  id: 'dst_1',
  sourceId: 'src_1',
  name: 'crm',
  type: 'webhooks',
  enabled: true,
  settings: {
    sharedSecret: '********',
    webhooks: [
      { url: 'https://a.example/hook', headers: { 'X-Api-Key': 'header-secret', 'X-Env': 'prod' }, clientCertificate: null },
      { url: 'https://b.example/hook', headers: {}, clientCertificate: { set: true } },
    ],
  },
  filter: null,
  signing: { standard: false, secrets: [] },
  createdAt: '2025-01-02T03:04:05.000Z',
  updatedAt: '2025-01-02T03:04:06.000Z',
};

useFakeAdminApi();

describe('destinations', () => {
  it('list prints a table, filtered by --source', async () => {
    api.on('GET', '/v1/destinations?sourceId=src_1', { status: 200, body: { destinations: [destination, { ...destination, id: 'dst_2', name: null, enabled: false }] } });
    const r = await cli(['destinations', 'list', '--source', 'src_1']);
    ok(r);
    sent('GET', '/v1/destinations?sourceId=src_1');
    assert.equal(r.stdout, ['ID     SOURCE  NAME  ENABLED  URLS', 'dst_1  src_1   crm   yes      2', 'dst_2  src_1   -     no       2', ''].join('\n'));
    api.requests.length = 0;
    api.on('GET', '/v1/destinations', { status: 200, body: { destinations: [] } });
    const all = await cli(['destinations', 'list']);
    sent('GET', '/v1/destinations');
    assert.equal(all.stdout, 'ID  SOURCE  NAME  ENABLED  URLS\n');
  });

  it('create applies every --header to every --url', async () => {
    api.on('POST', '/v1/destinations', { status: 201, body: destination });
    const r = await cli([
      'destinations', 'create', '--source', 'src_1', '--name', 'crm', '--disabled', '--secret', 's3cret',
      '--url', 'https://a.example/hook', '--url', 'https://b.example/hook',
      '--header', 'X-Api-Key: k:with:colons', '--header', 'X-Env:prod',
    ]);
    ok(r);
    const headers = { 'X-Api-Key': 'k:with:colons', 'X-Env': 'prod' };
    sent('POST', '/v1/destinations', {
      sourceId: 'src_1',
      type: 'webhooks',
      name: 'crm',
      enabled: false,
      settings: { sharedSecret: 's3cret', webhooks: [{ url: 'https://a.example/hook', headers }, { url: 'https://b.example/hook', headers }] },
    });
    assert.equal(
      r.stdout,
      [
        'id:            dst_1',
        'source:        src_1',
        'name:          crm',
        'type:          webhooks',
        'enabled:       yes',
        'shared secret: ********',
        'webhooks:      https://a.example/hook  (headers: X-Api-Key, X-Env)',
        '               https://b.example/hook  (client certificate: set)',
        'filter:        (none: every call)',
        'std webhooks:  off',
        "retry:         (the deployment's policy)",
        'rate limit:    (none)',
        'created:       2025-01-02T03:04:05.000Z',
        'updated:       2025-01-02T03:04:06.000Z',
        '',
      ].join('\n'),
    );
    assert.doesNotMatch(r.stdout, /header-secret/);
  });

  it('create with the minimum sends no optional fields', async () => {
    api.on('POST', '/v1/destinations', { status: 201, body: destination });
    ok(await cli(['destinations', 'create', '--source', 'src_1', '--url', 'https://a.example/hook']));
    sent('POST', '/v1/destinations', { sourceId: 'src_1', type: 'webhooks', settings: { webhooks: [{ url: 'https://a.example/hook' }] } });
  });

  it('create takes the whole webhooks array from --webhooks-json', async () => {
    api.on('POST', '/v1/destinations', { status: 201, body: destination });
    const webhooks = [{ url: 'https://a.example/hook', headers: { A: '1' } }, { url: 'https://b.example/hook' }];
    const r = await cli(['--json', 'destinations', 'create', '--source', 'src_1', '--webhooks-json', JSON.stringify(webhooks)]);
    ok(r);
    sent('POST', '/v1/destinations', { sourceId: 'src_1', type: 'webhooks', settings: { webhooks } });
    assert.deepEqual(JSON.parse(r.stdout), destination);
  });

  it('create refuses bad webhook flags without sending anything', async () => {
    const bad = [
      ['destinations', 'create', '--source', 'src_1'],
      ['destinations', 'create', '--source', 'src_1', '--header', 'A: 1'],
      ['destinations', 'create', '--source', 'src_1', '--url', 'https://a', '--webhooks-json', '[]'],
      ['destinations', 'create', '--source', 'src_1', '--url', 'https://a', '--header', 'no-colon-secret'],
      ['destinations', 'create', '--source', 'src_1', '--webhooks-json', '{"url":"x"}'],
      ['destinations', 'create', '--source', 'src_1', '--webhooks-json', '[{"url":1}]'],
      ['destinations', 'create', '--source', 'src_1', '--webhooks-json', 'not json secret'],
    ];
    for (const argv of bad) {
      const r = await cli(argv);
      assert.equal(r.code, 2, argv.join(' '));
      assert.match(r.stderr, /^error: /);
      assert.doesNotMatch(r.stderr, /secret/, 'a flag value is never echoed');
    }
    assert.equal(api.requests.length, 0);
  });

  it('get shows header names, not values, and the masked secret', async () => {
    api.on('GET', '/v1/destinations/dst_1', { status: 200, body: { ...destination, settings: { ...destination.settings, sharedSecret: null } } });
    const r = await cli(['destinations', 'get', 'dst_1']);
    ok(r);
    sent('GET', '/v1/destinations/dst_1');
    assert.match(r.stdout, /^shared secret: \(none\)$/m);
    assert.match(r.stdout, /^webhooks: +https:\/\/a\.example\/hook {2}\(headers: X-Api-Key, X-Env\)$/m);
    assert.doesNotMatch(r.stdout, /header-secret|prod/);
  });

  it('update replaces the URL list and removes the secret with --no-secret', async () => {
    api.on('PATCH', '/v1/destinations/dst_1', { status: 200, body: destination });
    ok(await cli(['destinations', 'update', 'dst_1', '--enable', '--url', 'https://c.example', '--header', 'A: 1', '--no-secret']));
    sent('PATCH', '/v1/destinations/dst_1', { enabled: true, settings: { webhooks: [{ url: 'https://c.example', headers: { A: '1' } }], sharedSecret: null } });
  });

  it('create and update carry a retry policy; --no-retry drops it; the block shows it', async () => {
    api.on('POST', '/v1/destinations', { status: 201, body: { ...destination, retry: { tiers: ['30s', '5m'], deadline: '4h' } } });
    const r = await cli(['destinations', 'create', '--source', 'src_1', '--url', 'https://a.example/hook', '--retry-tiers', '30s, 5m', '--retry-deadline', '4h']);
    ok(r);
    sent('POST', '/v1/destinations', { sourceId: 'src_1', type: 'webhooks', settings: { webhooks: [{ url: 'https://a.example/hook' }] }, retry: { tiers: ['30s', '5m'], deadline: '4h' } });
    assert.match(r.stdout, /retry:\s+30s, 5m until 4h/);
    api.requests.length = 0;
    api.on('PATCH', '/v1/destinations/dst_1', { status: 200, body: destination });
    ok(await cli(['destinations', 'update', 'dst_1', '--no-retry']));
    sent('PATCH', '/v1/destinations/dst_1', { retry: null });
    const half = await cli(['destinations', 'update', 'dst_1', '--retry-tiers', '30s']);
    assert.equal(half.code, 2);
    assert.match(half.stderr, /--retry-tiers and --retry-deadline together/);
  });

  it('update sends only the fields given', async () => {
    api.on('PATCH', '/v1/destinations/dst_1', { status: 200, body: destination });
    ok(await cli(['destinations', 'update', 'dst_1', '--secret', 'new']));
    sent('PATCH', '/v1/destinations/dst_1', { settings: { sharedSecret: 'new' } });
    api.requests.length = 0;
    ok(await cli(['destinations', 'update', 'dst_1', '--name', 'n', '--disable']));
    sent('PATCH', '/v1/destinations/dst_1', { name: 'n', enabled: false });
    api.requests.length = 0;
    ok(await cli(['destinations', 'update', 'dst_1', '--webhooks-json', '[{"url":"https://d.example"}]']));
    sent('PATCH', '/v1/destinations/dst_1', { settings: { webhooks: [{ url: 'https://d.example' }] } });
    api.requests.length = 0;
    const r = await cli(['destinations', 'update', 'dst_1']);
    assert.equal(r.code, 2);
    assert.equal(api.requests.length, 0);
  });

  it('--rate-limit sends {perSecond}; --no-rate-limit sends null; a non-number is refused unsent; get shows it', async () => {
    api.on('PATCH', '/v1/destinations/dst_1', { status: 200, body: { ...destination, rateLimit: { perSecond: 50 } } });
    const shown = await cli(['destinations', 'update', 'dst_1', '--rate-limit', '50']);
    ok(shown);
    sent('PATCH', '/v1/destinations/dst_1', { rateLimit: { perSecond: 50 } });
    assert.match(shown.stdout, /rate limit: +50\/s/);
    api.requests.length = 0;
    ok(await cli(['destinations', 'update', 'dst_1', '--no-rate-limit']));
    sent('PATCH', '/v1/destinations/dst_1', { rateLimit: null });
    api.requests.length = 0;
    for (const bad of ['x', '', '2.5', '-1']) {
      const r = await cli(['destinations', 'update', 'dst_1', `--rate-limit=${bad}`]);
      assert.equal(r.code, 2, bad);
    }
    assert.equal(api.requests.length, 0);
  });

  it('create and update send the --filter or --filter-file JSON; --no-filter sends null; get shows it', async () => {
    const filter = { types: ['track'], events: ['Order *'] };
    api.on('POST', '/v1/destinations', { status: 201, body: { ...destination, filter } });
    const created = await cli(['destinations', 'create', '--source', 'src_1', '--url', 'https://a.example/hook', '--filter', JSON.stringify(filter)]);
    ok(created);
    sent('POST', '/v1/destinations', { sourceId: 'src_1', type: 'webhooks', settings: { webhooks: [{ url: 'https://a.example/hook' }] }, filter });
    assert.match(created.stdout, /^filter: +\{"types":\["track"\],"events":\["Order \*"\]\}$/m);
    api.requests.length = 0;
    const dir = await mkdtemp(join(tmpdir(), 'cli-filter-'));
    try {
      await writeFile(join(dir, 'filter.json'), '{"where":{"property":"total","op":"gt","value":50}}');
      api.on('PATCH', '/v1/destinations/dst_1', { status: 200, body: destination });
      ok(await cli(['destinations', 'update', 'dst_1', '--filter-file', join(dir, 'filter.json')]));
      sent('PATCH', '/v1/destinations/dst_1', { filter: { where: { property: 'total', op: 'gt', value: 50 } } });
    } finally {
      await rm(dir, { recursive: true });
    }
    api.requests.length = 0;
    const cleared = await cli(['destinations', 'update', 'dst_1', '--no-filter']);
    ok(cleared);
    sent('PATCH', '/v1/destinations/dst_1', { filter: null });
    assert.match(cleared.stdout, /^filter: +\(none: every call\)$/m);
    api.requests.length = 0;
    const bad = await cli(['destinations', 'update', 'dst_1', '--filter', '[1]']);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /--filter must be a JSON object/);
    assert.equal(api.requests.length, 0);
  });

  it('--standard-signatures asks for a secret and prints it once; signing-secrets rotate prints only the new one; list shows ids', async () => {
    const signing = { standard: true, secrets: [{ id: 'whs_1', createdAt: '2025-01-02T03:04:05.000Z', expiresAt: null }] };
    api.on('PATCH', '/v1/destinations/dst_1', { status: 200, body: { ...destination, signing: { ...signing, newSecret: { id: 'whs_1', secret: 'whsec_c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0', createdAt: '2025-01-02T03:04:05.000Z' } } } });
    const on = await cli(['destinations', 'update', 'dst_1', '--standard-signatures']);
    ok(on);
    sent('PATCH', '/v1/destinations/dst_1', { signing: { standard: true } });
    assert.match(on.stdout, /^std webhooks: +whs_1 {2}created 2025-01-02T03:04:05\.000Z {2}\(current\)$/m);
    assert.match(on.stdout, /shown only now.*\nwhsec_c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0\n$/);
    api.requests.length = 0;
    api.on('PATCH', '/v1/destinations/dst_1', { status: 200, body: destination });
    ok(await cli(['destinations', 'update', 'dst_1', '--no-standard-signatures']));
    sent('PATCH', '/v1/destinations/dst_1', { signing: { standard: false } });
    api.requests.length = 0;
    api.on('POST', '/v1/destinations/dst_1/secrets/rotate', { status: 201, body: { signingSecret: { id: 'whs_2', secret: 'whsec_bmV3bmV3bmV3bmV3bmV3bmV3bmV3bmV3', createdAt: '2025-01-03T00:00:00.000Z' }, destination } });
    const rotated = await cli(['signing-secrets', 'rotate', 'dst_1', '--grace-period', '2h']);
    ok(rotated);
    sent('POST', '/v1/destinations/dst_1/secrets/rotate', { gracePeriod: '2h' });
    assert.equal(rotated.stdout, 'whsec_bmV3bmV3bmV3bmV3bmV3bmV3bmV3bmV3\n');
    api.requests.length = 0;
    const bad = await cli(['signing-secrets', 'rotate', 'dst_1', '--grace-period', 'tomorrow']);
    assert.equal(bad.code, 2);
    assert.equal(api.requests.length, 0);
    api.on('GET', '/v1/destinations/dst_1', { status: 200, body: { ...destination, signing: { standard: true, secrets: [{ id: 'whs_1', createdAt: '2025-01-02T03:04:05.000Z', expiresAt: '2025-01-03T02:00:00.000Z' }, { id: 'whs_2', createdAt: '2025-01-03T00:00:00.000Z', expiresAt: null }] } } });
    const listed = await cli(['signing-secrets', 'list', 'dst_1']);
    ok(listed);
    assert.match(listed.stdout, /whs_1\s+2025-01-02T03:04:05\.000Z\s+2025-01-03T02:00:00\.000Z/);
    assert.match(listed.stdout, /whs_2\s+2025-01-03T00:00:00\.000Z\s+\(current\)/);
  });

  it('--client-cert and --client-key send both files to every --url; --no-client-cert sends null; never echoed', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'cli-client-cert-'));
    try {
      await writeFile(join(dir, 'client.pem'), 'CERT-PEM-TEXT');
      await writeFile(join(dir, 'client.key'), 'KEY-PEM-SECRET');
      const pair = { cert: 'CERT-PEM-TEXT', key: 'KEY-PEM-SECRET' };
      api.on('POST', '/v1/destinations', { status: 201, body: destination });
      const created = await cli(['destinations', 'create', '--source', 'src_1', '--url', 'https://a.example/hook', '--url', 'https://b.example/hook', '--client-cert', join(dir, 'client.pem'), '--client-key', join(dir, 'client.key')]);
      ok(created);
      sent('POST', '/v1/destinations', { sourceId: 'src_1', type: 'webhooks', settings: { webhooks: [{ url: 'https://a.example/hook', clientCertificate: pair }, { url: 'https://b.example/hook', clientCertificate: pair }] } });
      assert.doesNotMatch(created.stdout, /PEM/);
      api.requests.length = 0;
      api.on('PATCH', '/v1/destinations/dst_1', { status: 200, body: destination });
      ok(await cli(['destinations', 'update', 'dst_1', '--url', 'https://b.example/hook', '--no-client-cert']));
      sent('PATCH', '/v1/destinations/dst_1', { settings: { webhooks: [{ url: 'https://b.example/hook', clientCertificate: null }] } });
      api.requests.length = 0;
      ok(await cli(['destinations', 'update', 'dst_1', '--webhooks-json', JSON.stringify([{ url: 'https://b.example/hook', clientCertificate: pair }])]));
      sent('PATCH', '/v1/destinations/dst_1', { settings: { webhooks: [{ url: 'https://b.example/hook', clientCertificate: pair }] } });
      api.requests.length = 0;
      const bad = [
        ['destinations', 'create', '--source', 'src_1', '--url', 'https://a', '--client-cert', join(dir, 'client.pem')],
        ['destinations', 'create', '--source', 'src_1', '--url', 'https://a', '--client-key', join(dir, 'client.key')],
        ['destinations', 'create', '--source', 'src_1', '--url', 'https://a', '--client-cert', join(dir, 'missing.pem'), '--client-key', join(dir, 'client.key')],
        ['destinations', 'update', 'dst_1', '--client-cert', join(dir, 'client.pem'), '--client-key', join(dir, 'client.key')],
        ['destinations', 'update', 'dst_1', '--no-client-cert'],
        ['destinations', 'create', '--source', 'src_1', '--webhooks-json', '[{"url":"https://a"}]', '--client-cert', join(dir, 'client.pem'), '--client-key', join(dir, 'client.key')],
        ['destinations', 'create', '--source', 'src_1', '--webhooks-json', '[{"url":"https://a","clientCertificate":{"cert":"KEY-PEM-SECRET"}}]'],
      ];
      for (const argv of bad) {
        const r = await cli(argv);
        assert.equal(r.code, 2, argv.join(' '));
        assert.doesNotMatch(r.stderr, /KEY-PEM-SECRET|CERT-PEM-TEXT/, 'file contents are never echoed');
      }
      assert.equal(api.requests.length, 0);
    } finally {
      await rm(dir, { recursive: true });
    }
  });

  it('delete prints what it deleted', async () => {
    api.on('DELETE', '/v1/destinations/dst_1', { status: 204 });
    const r = await cli(['destinations', 'delete', 'dst_1']);
    ok(r);
    sent('DELETE', '/v1/destinations/dst_1');
    assert.equal(r.stdout, 'deleted destination dst_1\n');
  });
});
