// switchyard tokens, run against a fake admin API.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Token, TokenCreated } from './admin-client.js';
import { api, cli, ok, sent, useFakeAdminApi } from './test-support/cli-harness.js';

const token: Token = { id: 'tok_1', name: 'grafana', scopes: ['metadata'], sourceIds: ['src_1', 'src_2'], createdAt: '2026-11-29T10:00:00.000Z' };
const created: TokenCreated = { ...token, token: 'syt_made-just-now' };

useFakeAdminApi();

describe('tokens', () => {
  it('create sends the name, every --scope and every --source, and prints the token once with a warning to store it', async () => {
    api.on('POST', '/v1/tokens', { status: 201, body: created });
    const r = await cli(['tokens', 'create', '--name', 'grafana', '--scope', 'metadata', '--scope', 'read', '--source', 'src_1', '--source', 'src_2']);
    ok(r);
    sent('POST', '/v1/tokens', { name: 'grafana', scopes: ['metadata', 'read'], sourceIds: ['src_1', 'src_2'] });
    assert.equal(r.stdout, [
      'id:      tok_1',
      'name:    grafana',
      'scopes:  metadata',
      'sources: src_1',
      '         src_2',
      'created: 2026-11-29T10:00:00.000Z',
      'token:   syt_made-just-now',
      'The token is shown only this once: store it now.',
      '',
    ].join('\n'));
  });

  it('create without --source sends no sourceIds; --json prints the answer as is', async () => {
    api.on('POST', '/v1/tokens', { status: 201, body: { ...created, scopes: ['admin'], sourceIds: null } });
    const r = await cli(['--json', 'tokens', 'create', '--name', 'ops', '--scope', 'admin']);
    ok(r);
    sent('POST', '/v1/tokens', { name: 'ops', scopes: ['admin'] });
    assert.equal(JSON.parse(r.stdout).token, 'syt_made-just-now');
  });

  it('create refuses an unknown scope and a missing --name or --scope as usage errors, sending nothing', async () => {
    for (const argv of [['tokens', 'create', '--name', 'x', '--scope', 'write'], ['tokens', 'create', '--scope', 'read'], ['tokens', 'create', '--name', 'x']]) {
      const r = await cli(argv);
      assert.equal(r.code, 2, argv.join(' '));
      assert.equal(api.requests.length, 0);
    }
  });

  it('list prints a table without values; revoke sends DELETE and says so', async () => {
    api.on('GET', '/v1/tokens', { status: 200, body: { tokens: [token, { ...token, id: 'tok_22', name: 'ops', scopes: ['admin'], sourceIds: null }] } });
    const r = await cli(['tokens', 'list']);
    ok(r);
    sent('GET', '/v1/tokens');
    assert.equal(r.stdout, [
      'ID      NAME     SCOPES    SOURCES      CREATED',
      'tok_1   grafana  metadata  src_1,src_2  2026-11-29T10:00:00.000Z',
      'tok_22  ops      admin     (all)        2026-11-29T10:00:00.000Z',
      '',
    ].join('\n'));
    api.reset();
    api.on('DELETE', '/v1/tokens/tok_1', { status: 204 });
    const revoked = await cli(['tokens', 'revoke', 'tok_1']);
    ok(revoked);
    sent('DELETE', '/v1/tokens/tok_1');
    assert.equal(revoked.stdout, 'revoked token tok_1\n');
  });

  it('a refusal prints its code: 403 MISSING_SCOPE from a read-only token', async () => {
    api.on('POST', '/v1/tokens', { status: 403, body: { code: 'MISSING_SCOPE', scope: 'admin', message: 'this token lacks the admin scope this request needs' } });
    const r = await cli(['tokens', 'create', '--name', 'x', '--scope', 'read']);
    assert.equal(r.code, 1);
    assert.equal(r.stderr, 'error MISSING_SCOPE: this token lacks the admin scope this request needs\n');
  });
});
