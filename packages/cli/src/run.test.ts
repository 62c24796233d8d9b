import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import type { DeadLetter, DeadLetterDetail, Destination, Source } from './admin-client.js';
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
