// How the CLI reports API errors, an unreachable API and usage errors, and the exit codes it ends with.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { api, cli, ok, sent, TOKEN, useFakeAdminApi } from './test-support/cli-harness.js';
import { startFakeAdminApi } from './test-support/fake-admin-api.js';

useFakeAdminApi();

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
