import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, beforeEach, describe, it } from 'node:test';
import type { Audience, ComputedTrait, DeadLetter, DeadLetterDetail, Destination, Source } from './admin-client.js';
import { run } from './run.js';
import { startFakeAdminApi, type FakeAdminApi } from './test-support/fake-admin-api.js';

const TOKEN = 'tok-secret-0123456789';

const source: Source = {
  id: 'src_1',
  name: 'web',
  enabled: true,
  writeKeys: ['wk_a', 'wk_b'],
  createdAt: '2025-01-02T03:04:05.000Z',
  updatedAt: '2025-01-02T03:04:06.000Z',
};

const destination: Destination = {
  id: 'dst_1',
  sourceId: 'src_1',
  name: 'crm',
  type: 'webhooks',
  enabled: true,
  settings: {
    sharedSecret: '********',
    webhooks: [
      { url: 'https://a.example/hook', headers: { 'X-Api-Key': 'header-secret', 'X-Env': 'prod' } },
      { url: 'https://b.example/hook', headers: {} },
    ],
  },
  filter: null,
  signing: { standard: false, secrets: [] },
  createdAt: '2025-01-02T03:04:05.000Z',
  updatedAt: '2025-01-02T03:04:06.000Z',
};

const deadLetter: DeadLetter = {
  id: 'dl_1',
  reason: 'retries_exhausted',
  status: 503,
  responseExcerpt: 'Service Unavailable',
  error: null,
  failedAt: '2025-01-09T10:00:00.000Z',
  destinationId: 'dst_1',
  sourceId: 'src_1',
  messageId: 'msg_1',
  eventType: 'track',
  attempts: 8,
  replayedAt: null,
};

/** The clock the CLI sees in these tests, for --since durations. */
const NOW = new Date('2025-01-10T12:00:00.000Z');

let api: FakeAdminApi;

interface Result {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs the CLI against the fake API with the token in the environment. */
async function cli(argv: string[], env: NodeJS.ProcessEnv = { SWITCHYARD_ADMIN_URL: api.url, SWITCHYARD_ADMIN_TOKEN: TOKEN }): Promise<Result> {
  let stdout = '';
  let stderr = '';
  const code = await run(argv, { env, stdout: (s) => void (stdout += s), stderr: (s) => void (stderr += s), now: () => NOW });
  // Whatever happens, the token must never be printed.
  assert.doesNotMatch(stdout + stderr, new RegExp(TOKEN));
  return { code, stdout, stderr };
}

/** Asserts the one request sent, including the bearer token. */
function sent(method: string, path: string, body?: unknown): void {
  const req = api.only();
  assert.equal(req.method, method);
  assert.equal(req.path, path);
  assert.equal(req.headers.authorization, `Bearer ${TOKEN}`);
  assert.deepEqual(req.body, body);
  if (body !== undefined) assert.equal(req.headers['content-type'], 'application/json');
}

function ok(r: Result): void {
  assert.equal(r.stderr, '');
  assert.equal(r.code, 0);
}

before(async () => {
  api = await startFakeAdminApi();
});
after(async () => {
  await api.close();
});
beforeEach(() => api.reset());

describe('sources', () => {
  it('list prints a table', async () => {
    api.on('GET', '/v1/sources', { status: 200, body: { sources: [source, { ...source, id: 'src_22', name: 'mobile-app', enabled: false, writeKeys: [] }] } });
    const r = await cli(['sources', 'list']);
    ok(r);
    sent('GET', '/v1/sources');
    assert.equal(
      r.stdout,
      ['ID      NAME        ENABLED  WRITE-KEYS', 'src_1   web         yes      2', 'src_22  mobile-app  no       0', ''].join('\n'),
    );
  });

  it('list --json prints the response as is, before or after the command', async () => {
    const body = { sources: [source] };
    api.on('GET', '/v1/sources', { status: 200, body });
    for (const argv of [['--json', 'sources', 'list'], ['sources', 'list', '--json']]) {
      const r = await cli(argv);
      ok(r);
      assert.equal(r.stdout, `${JSON.stringify(body, null, 2)}\n`);
    }
  });

  it('create sends the name, and enabled: false only with --disabled', async () => {
    api.on('POST', '/v1/sources', { status: 201, body: source });
    const r = await cli(['sources', 'create', 'web']);
    ok(r);
    sent('POST', '/v1/sources', { name: 'web' });
    assert.equal(
      r.stdout,
      [
        'id:         src_1',
        'name:       web',
        'enabled:    yes',
        'write keys: wk_a',
        '            wk_b',
        'created:    2025-01-02T03:04:05.000Z',
        'updated:    2025-01-02T03:04:06.000Z',
        '',
      ].join('\n'),
    );
    api.reset();
    api.on('POST', '/v1/sources', { status: 201, body: { ...source, enabled: false } });
    ok(await cli(['sources', 'create', 'web', '--disabled']));
    sent('POST', '/v1/sources', { name: 'web', enabled: false });
  });

  it('get encodes the id in the path', async () => {
    api.on('GET', '/v1/sources/src%2F1', { status: 200, body: { ...source, writeKeys: [] } });
    const r = await cli(['sources', 'get', 'src/1']);
    ok(r);
    sent('GET', '/v1/sources/src%2F1');
    assert.match(r.stdout, /^write keys: \(none\)$/m);
  });

  it('update sends only what was given', async () => {
    api.on('PATCH', '/v1/sources/src_1', { status: 200, body: source });
    ok(await cli(['sources', 'update', 'src_1', '--name', 'web2', '--disable']));
    sent('PATCH', '/v1/sources/src_1', { name: 'web2', enabled: false });
    api.requests.length = 0;
    const r = await cli(['sources', 'update', 'src_1', '--enable', '--json']);
    ok(r);
    sent('PATCH', '/v1/sources/src_1', { enabled: true });
    assert.deepEqual(JSON.parse(r.stdout), source);
  });

  it('update refuses to send an empty or contradictory change', async () => {
    for (const argv of [['sources', 'update', 'src_1'], ['sources', 'update', 'src_1', '--enable', '--disable']]) {
      const r = await cli(argv);
      assert.equal(r.code, 2);
      assert.match(r.stderr, /^error: /);
    }
    assert.equal(api.requests.length, 0);
  });

  it('delete prints what it deleted, and nothing with --json', async () => {
    api.on('DELETE', '/v1/sources/src_1', { status: 204 });
    const r = await cli(['sources', 'delete', 'src_1']);
    ok(r);
    sent('DELETE', '/v1/sources/src_1');
    assert.equal(r.stdout, 'deleted source src_1\n');
    const j = await cli(['--json', 'sources', 'delete', 'src_1']);
    ok(j);
    assert.equal(j.stdout, '');
  });
});

describe('write-keys', () => {
  it('add prints only the new key, or the whole response with --json', async () => {
    const body = { writeKey: 'wk_new', source: { ...source, writeKeys: ['wk_a', 'wk_b', 'wk_new'] } };
    api.on('POST', '/v1/sources/src_1/write-keys', { status: 201, body });
    const r = await cli(['write-keys', 'add', 'src_1']);
    ok(r);
    sent('POST', '/v1/sources/src_1/write-keys');
    assert.equal(r.stdout, 'wk_new\n');
    const j = await cli(['write-keys', 'add', 'src_1', '--json']);
    assert.deepEqual(JSON.parse(j.stdout), body);
  });

  it('remove URL-encodes the key and prints the source', async () => {
    api.on('DELETE', '/v1/sources/src_1/write-keys/wk%2Fa%20b%3F', { status: 200, body: { ...source, writeKeys: ['wk_b'] } });
    const r = await cli(['write-keys', 'remove', 'src_1', 'wk/a b?']);
    ok(r);
    sent('DELETE', '/v1/sources/src_1/write-keys/wk%2Fa%20b%3F');
    assert.match(r.stdout, /^write keys: wk_b$/m);
  });

  it('remove takes a key that starts with "-" after --', async () => {
    api.on('DELETE', '/v1/sources/src_1/write-keys/-FiQg', { status: 200, body: { ...source, writeKeys: ['wk_b'] } });
    const r = await cli(['write-keys', 'remove', 'src_1', '--', '-FiQg']);
    ok(r);
    sent('DELETE', '/v1/sources/src_1/write-keys/-FiQg');
  });
});

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
        '               https://b.example/hook',
        'filter:        (none: every call)',
        'std webhooks:  off',
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

  it('delete prints what it deleted', async () => {
    api.on('DELETE', '/v1/destinations/dst_1', { status: 204 });
    const r = await cli(['destinations', 'delete', 'dst_1']);
    ok(r);
    sent('DELETE', '/v1/destinations/dst_1');
    assert.equal(r.stdout, 'deleted destination dst_1\n');
  });
});

describe('dead-letters', () => {
  const second: DeadLetter = { ...deadLetter, id: 'dl_22', reason: 'invalid_response', status: null, responseExcerpt: null, error: 'ECONNRESET', attempts: 1, replayedAt: '2025-01-10T11:00:00.000Z' };

  it('list prints a table and how many of how many were shown', async () => {
    api.on('GET', '/v1/dead-letters', { status: 200, body: { deadLetters: [deadLetter, second], total: 7 } });
    const r = await cli(['dead-letters', 'list']);
    ok(r);
    sent('GET', '/v1/dead-letters');
    assert.equal(
      r.stdout,
      [
        'ID     FAILED-AT                 DESTINATION  REASON             STATUS  ATTEMPTS  REPLAYED',
        'dl_1   2025-01-09T10:00:00.000Z  dst_1        retries_exhausted  503     8         -',
        'dl_22  2025-01-09T10:00:00.000Z  dst_1        invalid_response   -       1         2025-01-10T11:00:00.000Z',
        '2 of 7 dead letters',
        '',
      ].join('\n'),
    );
  });

  it('list sends every filter, --since a duration counted back from now', async () => {
    const path = '/v1/dead-letters?destinationId=dst+1%2Fa&reason=retries_exhausted&since=2025-01-08T12%3A00%3A00.000Z&limit=20';
    api.on('GET', path, { status: 200, body: { deadLetters: [], total: 0 } });
    const r = await cli(['dead-letters', 'list', '--destination', 'dst 1/a', '--reason', 'retries_exhausted', '--since', '2d', '--limit', '20']);
    ok(r);
    sent('GET', path);
    assert.equal(r.stdout, 'ID  FAILED-AT  DESTINATION  REASON  STATUS  ATTEMPTS  REPLAYED\n0 of 0 dead letters\n');
    for (const [since, sent] of [['30m', '2025-01-10T11:30:00.000Z'], ['1h', '2025-01-10T11:00:00.000Z'], ['2025-01-02T03:04:05+02:00', '2025-01-02T01:04:05.000Z']]) {
      api.requests.length = 0;
      await cli(['dead-letters', 'list', '--since', since as string]);
      assert.equal(api.only().path, `/v1/dead-letters?since=${encodeURIComponent(sent as string)}`);
    }
  });

  it('list --json prints the response as is', async () => {
    const body = { deadLetters: [deadLetter], total: 1 };
    api.on('GET', '/v1/dead-letters?limit=1', { status: 200, body });
    const r = await cli(['dead-letters', 'list', '--limit', '1', '--json']);
    ok(r);
    assert.equal(r.stdout, `${JSON.stringify(body, null, 2)}\n`);
  });

  it('list refuses a bad --since or --limit without sending anything', async () => {
    for (const argv of [['--since', 'yesterday'], ['--since', '2h30m'], ['--since', '1'], ['--since', '2025-13-01'], ['--limit', '0'], ['--limit', 'ten'], ['--limit', '1.5']]) {
      const r = await cli(['dead-letters', 'list', ...argv]);
      assert.equal(r.code, 2, argv.join(' '));
      assert.match(r.stderr, /^error: --(since|limit) /);
    }
    assert.equal(api.requests.length, 0);
  });

  it('get shows the fields, then the body laid out as it was sent', async () => {
    const detail: DeadLetterDetail = {
      ...second,
      responseExcerpt: 'line one\r\nline two\u001b[31m',
      body: '{"type":"track","n":12345678901234567890,"s":"a\\u00e9\\"b","props":{"list":[1,{}],"empty":[]}}',
    };
    api.on('GET', '/v1/dead-letters/dl%2F1', { status: 200, body: detail });
    const r = await cli(['dead-letters', 'get', 'dl/1']);
    ok(r);
    sent('GET', '/v1/dead-letters/dl%2F1');
    assert.equal(
      r.stdout,
      [
        'id:          dl_22',
        'reason:      invalid_response',
        'status:      -',
        'response:    line one',
        '             line two\\u001b[31m',
        'error:       ECONNRESET',
        'failed at:   2025-01-09T10:00:00.000Z',
        'destination: dst_1',
        'source:      src_1',
        'message:     msg_1',
        'event type:  track',
        'attempts:    1',
        'replayed at: 2025-01-10T11:00:00.000Z',
        '',
        'body:',
        '{',
        '  "type": "track",',
        '  "n": 12345678901234567890,',
        '  "s": "a\\u00e9\\"b",',
        '  "props": {',
        '    "list": [',
        '      1,',
        '      {}',
        '    ],',
        '    "empty": []',
        '  }',
        '}',
        '',
      ].join('\n'),
    );
    const j = await cli(['dead-letters', 'get', 'dl/1', '--json']);
    assert.deepEqual(JSON.parse(j.stdout), detail);
  });

  it('get of an unknown id exits 1 with the API error', async () => {
    api.on('GET', '/v1/dead-letters/nope', { status: 404, body: { code: 'DEAD_LETTER_NOT_FOUND', message: 'no dead letter "nope"' } });
    const r = await cli(['dead-letters', 'get', 'nope']);
    assert.equal(r.code, 1);
    assert.equal(r.stdout, '');
    assert.equal(r.stderr, 'error DEAD_LETTER_NOT_FOUND: no dead letter "nope"\n');
  });

  it('replay sends the ids and prints how many were replayed', async () => {
    api.on('POST', '/v1/dead-letters/replay', { status: 202, body: { replayed: ['dl_1', 'dl_22'], notFound: [] } });
    const r = await cli(['dead-letters', 'replay', 'dl_1', 'dl_22']);
    ok(r);
    sent('POST', '/v1/dead-letters/replay', { ids: ['dl_1', 'dl_22'] });
    assert.equal(r.stdout, 'replayed 2\n');
  });

  it('replay exits 0 with a warning when some ids were not found', async () => {
    const body = { replayed: ['dl_1'], notFound: ['dl_8', 'dl_9'] };
    api.on('POST', '/v1/dead-letters/replay', { status: 202, body });
    const r = await cli(['dead-letters', 'replay', 'dl_1', 'dl_8', 'dl_9']);
    assert.equal(r.code, 0);
    assert.equal(r.stdout, 'replayed 1\n');
    assert.equal(r.stderr, 'warning: not found, not replayed: dl_8, dl_9\n');
    const j = await cli(['--json', 'dead-letters', 'replay', 'dl_1', 'dl_8', 'dl_9']);
    assert.equal(j.code, 0);
    assert.deepEqual(JSON.parse(j.stdout), body);
    assert.equal(j.stderr, 'warning: not found, not replayed: dl_8, dl_9\n');
  });

  it('replay exits 1 when none of the ids was found', async () => {
    const body = { replayed: [], notFound: ['dl_8'] };
    api.on('POST', '/v1/dead-letters/replay', { status: 202, body });
    const r = await cli(['dead-letters', 'replay', 'dl_8']);
    assert.equal(r.code, 1);
    sent('POST', '/v1/dead-letters/replay', { ids: ['dl_8'] });
    assert.equal(r.stdout, 'replayed 0\n');
    assert.equal(r.stderr, 'error: no such dead letter, nothing replayed: dl_8\n');
    const j = await cli(['dead-letters', 'replay', 'dl_8', '--json']);
    assert.equal(j.code, 1);
    assert.deepEqual(JSON.parse(j.stdout), body);
  });

  it('replay needs at least one id, and its help tells the exit codes', async () => {
    const r = await cli(['dead-letters', 'replay']);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /missing required argument 'id'/);
    assert.equal(api.requests.length, 0);
    const h = await cli(['dead-letters', 'replay', '--help']);
    assert.equal(h.code, 0);
    assert.match(h.stdout, /exit code is 0 when at least one was replayed[\s\S]*1\s+when none was found/);
  });
});

describe('deletions', () => {
  it('request sends the user and each --source, and prints a summary', async () => {
    const body = { requestId: 'del_1', userId: 'user 1', notifications: 2, sourceIds: ['src_1', 'src_2'] };
    api.on('POST', '/v1/deletions', { status: 202, body });
    const r = await cli(['deletions', 'request', 'user 1', '--source', 'src_1', '--source', 'src_2']);
    ok(r);
    sent('POST', '/v1/deletions', { userId: 'user 1', sourceIds: ['src_1', 'src_2'] });
    assert.equal(r.stdout, 'deletion del_1: 2 notifications for sources src_1, src_2\n');
    const j = await cli(['--json', 'deletions', 'request', 'user 1', '--source', 'src_1', '--source', 'src_2']);
    ok(j);
    assert.deepEqual(JSON.parse(j.stdout), body);
  });

  it('request without --source leaves sourceIds out (all sources)', async () => {
    api.on('POST', '/v1/deletions', { status: 202, body: { requestId: 'del_2', userId: 'u', notifications: 1, sourceIds: ['src_1'] } });
    const r = await cli(['deletions', 'request', 'u']);
    ok(r);
    sent('POST', '/v1/deletions', { userId: 'u' });
    assert.equal(r.stdout, 'deletion del_2: 1 notification for source src_1\n');
    api.reset();
    api.on('POST', '/v1/deletions', { status: 202, body: { requestId: 'del_3', userId: 'u', notifications: 0, sourceIds: [] } });
    assert.equal((await cli(['deletions', 'request', 'u'])).stdout, 'deletion del_3: 0 notifications for no sources\n');
  });

  it('request exits 2 without a user and 1 on an API error', async () => {
    const r = await cli(['deletions', 'request']);
    assert.equal(r.code, 2);
    assert.equal(api.requests.length, 0);
    api.on('POST', '/v1/deletions', { status: 400, body: { code: 'UNKNOWN_SOURCE', message: 'no source "src_x"', field: 'sourceIds' } });
    const e = await cli(['deletions', 'request', 'u', '--source', 'src_x']);
    assert.equal(e.code, 1);
    assert.equal(e.stderr, 'error UNKNOWN_SOURCE: no source "src_x" (field: sourceIds)\n');
  });
});

describe('audiences', () => {
  const condition = { and: [{ trait: 'plan', op: 'eq', value: 'pro' }, { event: 'Order Completed', within: '30d', count: { op: 'gte', value: 3 } }] };
  const audience: Audience = {
    id: 'aud_1',
    sourceId: 'src_1',
    name: 'Big Spenders',
    property: 'big_spenders',
    condition,
    createdAt: '2025-01-02T03:04:05.000Z',
    updatedAt: '2025-01-02T03:04:06.000Z',
  };
  const audienceText = [
    'id:       aud_1',
    'source:   src_1',
    'name:     Big Spenders',
    'property: big_spenders',
    'created:  2025-01-02T03:04:05.000Z',
    'updated:  2025-01-02T03:04:06.000Z',
    '',
    'condition:',
    '{',
    '  "and": [',
    '    {',
    '      "trait": "plan",',
    '      "op": "eq",',
    '      "value": "pro"',
    '    },',
    '    {',
    '      "event": "Order Completed",',
    '      "within": "30d",',
    '      "count": {',
    '        "op": "gte",',
    '        "value": 3',
    '      }',
    '    }',
    '  ]',
    '}',
    '',
  ].join('\n');

  it('list prints a table, filtered by --source', async () => {
    api.on('GET', '/v1/audiences?sourceId=src%2F1', { status: 200, body: { audiences: [audience, { ...audience, id: 'aud_22', name: 'Churned', property: 'churned' }] } });
    const r = await cli(['audiences', 'list', '--source', 'src/1']);
    ok(r);
    sent('GET', '/v1/audiences?sourceId=src%2F1');
    assert.equal(r.stdout, ['ID      SOURCE  NAME          PROPERTY', 'aud_1   src_1   Big Spenders  big_spenders', 'aud_22  src_1   Churned       churned', ''].join('\n'));
    api.requests.length = 0;
    api.on('GET', '/v1/audiences', { status: 200, body: { audiences: [] } });
    const all = await cli(['audiences', 'list']);
    ok(all);
    sent('GET', '/v1/audiences');
    assert.equal(all.stdout, 'ID  SOURCE  NAME  PROPERTY\n');
  });

  it('list --json prints the response as is', async () => {
    const body = { audiences: [audience] };
    api.on('GET', '/v1/audiences', { status: 200, body });
    const r = await cli(['audiences', 'list', '--json']);
    ok(r);
    assert.equal(r.stdout, `${JSON.stringify(body, null, 2)}\n`);
  });

  it('create sends the source, name and parsed --condition, and prints the audience', async () => {
    api.on('POST', '/v1/audiences', { status: 201, body: audience });
    const r = await cli(['audiences', 'create', '--source', 'src_1', '--name', 'Big Spenders', '--condition', JSON.stringify(condition)]);
    ok(r);
    sent('POST', '/v1/audiences', { sourceId: 'src_1', name: 'Big Spenders', condition });
    assert.equal(r.stdout, audienceText);
    const j = await cli(['--json', 'audiences', 'create', '--source', 'src_1', '--name', 'Big Spenders', '--condition', JSON.stringify(condition)]);
    ok(j);
    assert.deepEqual(JSON.parse(j.stdout), audience);
  });

  it('create reads the condition from --condition-file', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'switchyard-cli-'));
    try {
      const file = join(dir, 'condition.json');
      await writeFile(file, `\uFEFF${JSON.stringify(condition, null, 2)}\n`);
      api.on('POST', '/v1/audiences', { status: 201, body: audience });
      ok(await cli(['audiences', 'create', '--source', 'src_1', '--name', 'Big Spenders', '--condition-file', file]));
      sent('POST', '/v1/audiences', { sourceId: 'src_1', name: 'Big Spenders', condition });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('create refuses a missing, unreadable or invalid condition without sending anything', async () => {
    const base = ['audiences', 'create', '--source', 'src_1', '--name', 'n'];
    const bad: [string[], RegExp][] = [
      [base, /^error: give --condition <json> or --condition-file <path>$/m],
      [[...base, '--condition', '{"trait": "plan",'], /^error: --condition is not valid JSON: /m],
      [[...base, '--condition', ''], /^error: --condition is not valid JSON: /m],
      [[...base, '--condition', '[{"trait": "plan"}]'], /^error: --condition must be a JSON object/m],
      [[...base, '--condition', 'null'], /^error: --condition must be a JSON object/m],
      [[...base, '--condition', '{}', '--condition-file', 'c.json'], /^error: option '--condition <json>' cannot be used with option '--condition-file <path>'$/m],
      [[...base, '--condition-file', join(tmpdir(), 'switchyard-no-such-file.json')], /^error: cannot read --condition-file .*switchyard-no-such-file\.json: ENOENT/m],
      [['audiences', 'create', '--name', 'n', '--condition', '{}'], /^error: required option '--source <id>' not specified$/m],
      [['audiences', 'create', '--source', 'src_1', '--condition', '{}'], /^error: required option '--name <name>' not specified$/m],
    ];
    for (const [argv, message] of bad) {
      const r = await cli(argv);
      assert.equal(r.code, 2, argv.join(' '));
      assert.equal(r.stdout, '');
      assert.match(r.stderr, message);
    }
    assert.equal(api.requests.length, 0);
  });

  it('create exits 1 with the INVALID_CONDITION error and its field', async () => {
    const bad = { and: [{ trait: 'plan', op: 'eq', value: 'pro' }, { event: 'Order Completed', within: '30d', count: { op: 'gte', value: -1 } }] };
    api.on('POST', '/v1/audiences', {
      status: 400,
      body: { code: 'INVALID_CONDITION', message: 'must be a whole number from 0 to 10000', field: 'condition.and[1].count.value' },
    });
    const r = await cli(['audiences', 'create', '--source', 'src_1', '--name', 'n', '--condition', JSON.stringify(bad)]);
    assert.equal(r.code, 1);
    sent('POST', '/v1/audiences', { sourceId: 'src_1', name: 'n', condition: bad });
    assert.equal(r.stdout, '');
    assert.equal(r.stderr, 'error INVALID_CONDITION: must be a whole number from 0 to 10000 (field: condition.and[1].count.value)\n');
  });

  it('create exits 1 on DUPLICATE_PROPERTY and UNKNOWN_SOURCE', async () => {
    for (const [code, message, field] of [['DUPLICATE_PROPERTY', 'the source already has a property n', 'name'], ['UNKNOWN_SOURCE', 'no source "src_x"', 'sourceId']] as const) {
      api.on('POST', '/v1/audiences', { status: 400, body: { code, message, field } });
      const r = await cli(['audiences', 'create', '--source', 'src_x', '--name', 'n', '--condition', '{"trait":"a","op":"exists"}']);
      assert.equal(r.code, 1);
      assert.equal(r.stderr, `error ${code}: ${message} (field: ${field})\n`);
    }
  });

  it('get encodes the id and shows the condition laid out', async () => {
    api.on('GET', '/v1/audiences/aud%2F1', { status: 200, body: audience });
    const r = await cli(['audiences', 'get', 'aud/1']);
    ok(r);
    sent('GET', '/v1/audiences/aud%2F1');
    assert.equal(r.stdout, audienceText);
    const j = await cli(['audiences', 'get', 'aud/1', '--json']);
    ok(j);
    assert.deepEqual(JSON.parse(j.stdout), audience);
  });

  it('get escapes control characters in the condition', async () => {
    api.on('GET', '/v1/audiences/aud_1', { status: 200, body: { ...audience, condition: { trait: 'plan', op: 'eq', value: 'a\u009b2Jb' } } });
    const r = await cli(['audiences', 'get', 'aud_1']);
    ok(r);
    assert.match(r.stdout, /^ {2}"value": "a\\u009b2Jb"$/m);
  });

  it('get of an unknown id exits 1 with AUDIENCE_NOT_FOUND', async () => {
    api.on('GET', '/v1/audiences/nope', { status: 404, body: { code: 'AUDIENCE_NOT_FOUND', message: 'no audience "nope"' } });
    const r = await cli(['audiences', 'get', 'nope']);
    assert.equal(r.code, 1);
    assert.equal(r.stdout, '');
    assert.equal(r.stderr, 'error AUDIENCE_NOT_FOUND: no audience "nope"\n');
  });

  it('update sends only the new condition, from --condition or --condition-file', async () => {
    const next = { not: { trait: 'plan', op: 'eq', value: 'free' } };
    api.on('PATCH', '/v1/audiences/aud_1', { status: 200, body: { ...audience, condition: next } });
    const r = await cli(['audiences', 'update', 'aud_1', '--condition', JSON.stringify(next)]);
    ok(r);
    sent('PATCH', '/v1/audiences/aud_1', { condition: next });
    assert.match(r.stdout, /^condition:\n\{\n {2}"not": \{\n {4}"trait": "plan",/m);
    const dir = await mkdtemp(join(tmpdir(), 'switchyard-cli-'));
    try {
      const file = join(dir, 'c.json');
      await writeFile(file, JSON.stringify(next));
      api.requests.length = 0;
      const j = await cli(['--json', 'audiences', 'update', 'aud_1', '--condition-file', file]);
      ok(j);
      sent('PATCH', '/v1/audiences/aud_1', { condition: next });
      assert.deepEqual(JSON.parse(j.stdout), { ...audience, condition: next });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('update refuses a missing or invalid condition, and reports INVALID_CONDITION', async () => {
    for (const argv of [['audiences', 'update', 'aud_1'], ['audiences', 'update', 'aud_1', '--condition', "{'a': 1}"], ['audiences', 'update', '--condition', '{}']]) {
      const r = await cli(argv);
      assert.equal(r.code, 2, argv.join(' '));
      assert.match(r.stderr, /^error: /);
    }
    assert.equal(api.requests.length, 0);
    api.on('PATCH', '/v1/audiences/aud_1', { status: 400, body: { code: 'INVALID_CONDITION', message: 'must have one of trait, event, and, or, not', field: 'condition' } });
    const e = await cli(['audiences', 'update', 'aud_1', '--condition', '{}']);
    assert.equal(e.code, 1);
    sent('PATCH', '/v1/audiences/aud_1', { condition: {} });
    assert.equal(e.stderr, 'error INVALID_CONDITION: must have one of trait, event, and, or, not (field: condition)\n');
  });

  it('delete prints what it deleted, nothing with --json, and exits 1 when not found', async () => {
    api.on('DELETE', '/v1/audiences/aud_1', { status: 204 });
    const r = await cli(['audiences', 'delete', 'aud_1']);
    ok(r);
    sent('DELETE', '/v1/audiences/aud_1');
    assert.equal(r.stdout, 'deleted audience aud_1\n');
    const j = await cli(['--json', 'audiences', 'delete', 'aud_1']);
    ok(j);
    assert.equal(j.stdout, '');
    api.on('DELETE', '/v1/audiences/nope', { status: 404, body: { code: 'AUDIENCE_NOT_FOUND', message: 'no audience "nope"' } });
    const e = await cli(['audiences', 'delete', 'nope']);
    assert.equal(e.code, 1);
    assert.equal(e.stdout, '');
    assert.equal(e.stderr, 'error AUDIENCE_NOT_FOUND: no audience "nope"\n');
  });

  it('create --help explains the condition language', async () => {
    const h = await cli(['audiences', 'create', '--help']);
    assert.equal(h.code, 0);
    assert.match(h.stdout, /--condition-file <path>/);
    assert.match(h.stdout, /\{"trait": "plan", "op": "eq", "value": "pro"\}/);
  });
});

describe('computed-traits', () => {
  const definition = { kind: 'event_count', event: 'Order Completed', within: '30d' };
  const trait: ComputedTrait = {
    id: 'ct_1',
    sourceId: 'src_1',
    name: 'Orders 30d',
    trait: 'orders_30d',
    definition,
    createdAt: '2025-01-02T03:04:05.000Z',
    updatedAt: '2025-01-02T03:04:06.000Z',
  };
  const traitText = [
    'id:      ct_1',
    'source:  src_1',
    'name:    Orders 30d',
    'trait:   orders_30d',
    'kind:    event_count',
    'created: 2025-01-02T03:04:05.000Z',
    'updated: 2025-01-02T03:04:06.000Z',
    '',
    'definition:',
    '{',
    '  "kind": "event_count",',
    '  "event": "Order Completed",',
    '  "within": "30d"',
    '}',
    '',
  ].join('\n');

  it('list prints a table, filtered by --source', async () => {
    const last = { ...trait, id: 'ct_22', name: 'Last order', trait: 'last_order', definition: { kind: 'last_seen', event: 'Order Completed' } };
    api.on('GET', '/v1/computed-traits?sourceId=src_1', { status: 200, body: { computedTraits: [trait, last] } });
    const r = await cli(['computed-traits', 'list', '--source', 'src_1']);
    ok(r);
    sent('GET', '/v1/computed-traits?sourceId=src_1');
    assert.equal(
      r.stdout,
      ['ID     SOURCE  NAME        TRAIT       KIND', 'ct_1   src_1   Orders 30d  orders_30d  event_count', 'ct_22  src_1   Last order  last_order  last_seen', ''].join('\n'),
    );
    api.requests.length = 0;
    const body = { computedTraits: [] };
    api.on('GET', '/v1/computed-traits', { status: 200, body });
    const all = await cli(['computed-traits', 'list']);
    ok(all);
    sent('GET', '/v1/computed-traits');
    assert.equal(all.stdout, 'ID  SOURCE  NAME  TRAIT  KIND\n');
    const j = await cli(['--json', 'computed-traits', 'list']);
    assert.equal(j.stdout, `${JSON.stringify(body, null, 2)}\n`);
  });

  it('create sends the source, name and parsed --definition, and prints the trait', async () => {
    api.on('POST', '/v1/computed-traits', { status: 201, body: trait });
    const r = await cli(['computed-traits', 'create', '--source', 'src_1', '--name', 'Orders 30d', '--definition', JSON.stringify(definition)]);
    ok(r);
    sent('POST', '/v1/computed-traits', { sourceId: 'src_1', name: 'Orders 30d', definition });
    assert.equal(r.stdout, traitText);
    const j = await cli(['computed-traits', 'create', '--source', 'src_1', '--name', 'Orders 30d', '--definition', JSON.stringify(definition), '--json']);
    ok(j);
    assert.deepEqual(JSON.parse(j.stdout), trait);
  });

  it('create reads the definition from --definition-file', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'switchyard-cli-'));
    try {
      const file = join(dir, 'definition.json');
      await writeFile(file, JSON.stringify(definition, null, 2));
      api.on('POST', '/v1/computed-traits', { status: 201, body: trait });
      ok(await cli(['computed-traits', 'create', '--source', 'src_1', '--name', 'Orders 30d', '--definition-file', file]));
      sent('POST', '/v1/computed-traits', { sourceId: 'src_1', name: 'Orders 30d', definition });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('create refuses a missing or invalid definition without sending anything', async () => {
    const base = ['computed-traits', 'create', '--source', 'src_1', '--name', 'n'];
    const bad: [string[], RegExp][] = [
      [base, /^error: give --definition <json> or --definition-file <path>$/m],
      [[...base, '--definition', 'kind=event_count'], /^error: --definition is not valid JSON: /m],
      [[...base, '--definition', '"event_count"'], /^error: --definition must be a JSON object/m],
      [[...base, '--definition', '{}', '--definition-file', 'd.json'], /cannot be used with option '--definition-file <path>'/],
      [[...base, '--definition-file', join(tmpdir(), 'switchyard-no-such-file.json')], /^error: cannot read --definition-file /m],
    ];
    for (const [argv, message] of bad) {
      const r = await cli(argv);
      assert.equal(r.code, 2, argv.join(' '));
      assert.match(r.stderr, message);
    }
    assert.equal(api.requests.length, 0);
  });

  it('create exits 1 with the API error and its field', async () => {
    api.on('POST', '/v1/computed-traits', { status: 400, body: { code: 'INVALID_DEFINITION', message: 'must be one of event_count, last_seen, latest_property', field: 'definition.kind' } });
    const r = await cli(['computed-traits', 'create', '--source', 'src_1', '--name', 'n', '--definition', '{"kind":"sum"}']);
    assert.equal(r.code, 1);
    sent('POST', '/v1/computed-traits', { sourceId: 'src_1', name: 'n', definition: { kind: 'sum' } });
    assert.equal(r.stdout, '');
    assert.equal(r.stderr, 'error INVALID_DEFINITION: must be one of event_count, last_seen, latest_property (field: definition.kind)\n');
  });

  it('get encodes the id and shows the definition laid out', async () => {
    api.on('GET', '/v1/computed-traits/ct%201', { status: 200, body: trait });
    const r = await cli(['computed-traits', 'get', 'ct 1']);
    ok(r);
    sent('GET', '/v1/computed-traits/ct%201');
    assert.equal(r.stdout, traitText);
    const j = await cli(['computed-traits', 'get', 'ct 1', '--json']);
    assert.deepEqual(JSON.parse(j.stdout), trait);
    api.on('GET', '/v1/computed-traits/nope', { status: 404, body: { code: 'COMPUTED_TRAIT_NOT_FOUND', message: 'no computed trait "nope"' } });
    const e = await cli(['computed-traits', 'get', 'nope']);
    assert.equal(e.code, 1);
    assert.equal(e.stderr, 'error COMPUTED_TRAIT_NOT_FOUND: no computed trait "nope"\n');
  });

  it('delete prints what it deleted, and nothing with --json', async () => {
    api.on('DELETE', '/v1/computed-traits/ct_1', { status: 204 });
    const r = await cli(['computed-traits', 'delete', 'ct_1']);
    ok(r);
    sent('DELETE', '/v1/computed-traits/ct_1');
    assert.equal(r.stdout, 'deleted computed trait ct_1\n');
    const j = await cli(['computed-traits', 'delete', 'ct_1', '--json']);
    ok(j);
    assert.equal(j.stdout, '');
    const missing = await cli(['computed-traits', 'delete']);
    assert.equal(missing.code, 2);
  });
});

describe('errors and exit codes', () => {
  it('an API error exits 1 with its code, message and field', async () => {
    api.on('POST', '/v1/destinations', {
      status: 400,
      body: { code: 'INVALID_URL', message: 'webhook URL must be http or https', field: 'settings.webhooks[0].url' },
    });
    const r = await cli(['destinations', 'create', '--source', 'src_1', '--url', 'ftp://x']);
    assert.equal(r.code, 1);
    assert.equal(r.stdout, '');
    assert.equal(r.stderr, 'error INVALID_URL: webhook URL must be http or https (field: settings.webhooks[0].url)\n');
  });

  it('an error without a field, and one that is not JSON', async () => {
    api.on('GET', '/v1/sources/nope', { status: 404, body: { code: 'NOT_FOUND', message: 'no source nope' } });
    const r = await cli(['sources', 'get', 'nope']);
    assert.equal(r.code, 1);
    assert.equal(r.stderr, 'error NOT_FOUND: no source nope\n');
    api.on('GET', '/v1/sources', { status: 502, body: 'Bad Gateway' });
    const p = await cli(['sources', 'list']);
    assert.equal(p.code, 1);
    assert.equal(p.stderr, 'error HTTP_502: Bad Gateway\n');
  });

  it('an unreachable API exits 1', async () => {
    const closed = await startFakeAdminApi();
    await closed.close();
    const r = await cli(['sources', 'list'], { SWITCHYARD_ADMIN_URL: closed.url, SWITCHYARD_ADMIN_TOKEN: TOKEN });
    assert.equal(r.code, 1);
    assert.match(r.stderr, /^error UNREACHABLE: could not reach the admin API at http:\/\/127\.0\.0\.1:\d+: .*ECONNREFUSED/);
  });

  it('an unknown command or a missing required option exits 2', async () => {
    for (const argv of [['bogus'], ['sources', 'bogus'], ['sources', 'get'], ['destinations', 'create', '--url', 'https://a'], ['sources', 'list', '--bogus'], []]) {
      const r = await cli(argv);
      assert.equal(r.code, 2, argv.join(' '));
      assert.equal(r.stdout, '');
      assert.notEqual(r.stderr, '');
    }
    const r = await cli(['destinations', 'create', '--url', 'https://a']);
    assert.match(r.stderr, /^error: required option '--source <id>' not specified$/m);
    assert.equal(api.requests.length, 0);
  });

  it('no token is a usage error naming both ways to give one', async () => {
    for (const env of [{ SWITCHYARD_ADMIN_URL: api.url }, { SWITCHYARD_ADMIN_URL: api.url, SWITCHYARD_ADMIN_TOKEN: '' }]) {
      const r = await cli(['sources', 'list'], env);
      assert.equal(r.code, 2);
      assert.match(r.stderr, /^error: no admin token: pass --token <token> or set SWITCHYARD_ADMIN_TOKEN$/m);
    }
    assert.equal(api.requests.length, 0);
  });

  it('--url and --token override the environment', async () => {
    api.on('GET', '/v1/sources', { status: 200, body: { sources: [] } });
    const r = await cli(['--url', `${api.url}/`, '--token', TOKEN, 'sources', 'list'], { SWITCHYARD_ADMIN_URL: 'http://127.0.0.1:1', SWITCHYARD_ADMIN_TOKEN: 'other' });
    ok(r);
    sent('GET', '/v1/sources');
    const bad = await cli(['--url', 'ftp://x', 'sources', 'list']);
    assert.equal(bad.code, 2);
  });

  it('--help exits 0 and writes to stdout', async () => {
    const r = await cli(['destinations', 'create', '--help']);
    assert.equal(r.code, 0);
    assert.match(r.stdout, /--webhooks-json <json>/);
    assert.equal(r.stderr, '');
  });
});

describe('replays', () => {
  const replay = (over: Record<string, unknown> = {}) => ({
    id: 'rpl_1', destinationId: 'dst_1', state: 'running', from: '2025-01-10T10:00:00.000Z', to: '2025-01-10T11:00:00.000Z', filter: null, rate: 500,
    createdAt: '2025-01-10T12:00:00.000Z', cancelRequestedAt: null, total: 10000, scanned: 2500, matched: 2000, enqueued: 2000, progress: 0.25,
    recordsPerSecond: 500, etaSeconds: 15, updatedAt: '2025-01-10T12:00:05.000Z', error: null, notReplayable: [], ...over,
  });

  it('start sends the range (durations counted back from now), the rate and the filter', async () => {
    api.on('POST', '/v1/destinations/dst_1/replays', { status: 202, body: replay() });
    const r = await cli(['replays', 'start', 'dst_1', '--from', '2h', '--to', '1h', '--rate', '200', '--filter', '{"types":["track"]}']);
    ok(r);
    sent('POST', '/v1/destinations/dst_1/replays', { from: '2025-01-10T10:00:00.000Z', to: '2025-01-10T11:00:00.000Z', rate: 200, filter: { types: ['track'] } });
    assert.match(r.stdout, /^progress: +\[######-+\] +25% running · read 2500\/10000 · matched 2000 · enqueued 2000 · 500\/s · 15s left$/m);
    const bad = await cli(['replays', 'start', 'dst_1', '--from', 'yesterday']);
    assert.equal(bad.code, 2);
  });

  it('status --watch redraws a progress bar on stderr until the replay ends; cancel and list', async () => {
    let polls = 0;
    api.on('GET', '/v1/destinations/dst_1/replays/rpl_1', () => ({ status: 200, body: ++polls < 3 ? replay({ scanned: 2500 * polls, progress: 0.25 * polls }) : replay({ state: 'done', scanned: 10000, progress: 1, etaSeconds: null }) }));
    let stderr = '';
    let stdout = '';
    const code = await run(['replays', 'status', 'dst_1', 'rpl_1', '--watch'], { env: { SWITCHYARD_ADMIN_URL: api.url, SWITCHYARD_ADMIN_TOKEN: TOKEN }, stdout: (s) => { stdout += s; }, stderr: (s) => { stderr += s; }, sleep: async () => undefined });
    assert.equal(code, 0);
    assert.match(stderr, /\r\[######-+\] +25%/);
    assert.match(stderr, /\r\[#{24}\] 100% done/);
    assert.match(stdout, /^state: +done$/m);
    api.on('DELETE', '/v1/destinations/dst_1/replays/rpl_1', { status: 202, body: replay({ cancelRequestedAt: '2025-01-10T12:00:06.000Z' }) });
    const cancelled = await cli(['replays', 'cancel', 'dst_1', 'rpl_1']);
    ok(cancelled);
    assert.equal(cancelled.stdout, 'cancelling replay rpl_1\n');
    api.on('GET', '/v1/destinations/dst_1/replays', { status: 200, body: { replays: [replay()] } });
    assert.match((await cli(['replays', 'list', 'dst_1'])).stdout, /rpl_1\s+running\s+2025-01-10T10:00:00\.000Z\s+2025-01-10T11:00:00\.000Z\s+2500\/10000\s+2000/);
  });
});
