// switchyard sources and write-keys, run against a fake admin API.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Source } from './admin-client.js';
import { api, cli, ok, sent, useFakeAdminApi } from './test-support/cli-harness.js';

const source: Source = {
  id: 'src_1',
  name: 'web',
  enabled: true,
  writeKeys: ['wk_a', 'wk_b'],
  createdAt: '2025-01-02T03:04:05.000Z',
  updatedAt: '2025-01-02T03:04:06.000Z',
};

useFakeAdminApi();

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
