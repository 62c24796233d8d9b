// switchyard dead-letters, run against a fake admin API.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { DeadLetter, DeadLetterDetail } from './admin-client.js';
import { api, cli, ok, sent, useFakeAdminApi } from './test-support/cli-harness.js';

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

useFakeAdminApi();

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

  it('get for a metadata token (body and excerpt null) says the body is not shown', async () => {
    api.on('GET', '/v1/dead-letters/dl_22', { status: 200, body: { ...second, responseExcerpt: null, body: null } });
    const r = await cli(['dead-letters', 'get', 'dl_22']);
    ok(r);
    assert.match(r.stdout, /^response: {4}-$/m);
    assert.ok(r.stdout.endsWith('body:\n  (not shown to this token)\n'), r.stdout);
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
