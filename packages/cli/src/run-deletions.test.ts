// switchyard deletions, run against a fake admin API.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { api, cli, ok, sent, useFakeAdminApi } from './test-support/cli-harness.js';

useFakeAdminApi();

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
