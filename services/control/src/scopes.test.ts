import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Access, accessOf, ENV_ADMIN, hasScope, missingScope, requiredScope, SCOPES, type Principal, type Scope } from './scopes.js';

const token = (scopes: Scope[], sourceIds: string[] | null = null): Principal => ({ tokenId: 'tok_1', scopes: new Set(scopes), sourceIds: sourceIds === null ? null : new Set(sourceIds) });

describe('scopes', () => {
  it('each scope grants itself and the ones below it: admin ⊃ read ⊃ metadata', () => {
    const table: Array<[Scope[], Record<Scope, boolean>]> = [
      [['admin'], { admin: true, read: true, metadata: true }],
      [['read'], { admin: false, read: true, metadata: true }],
      [['metadata'], { admin: false, read: false, metadata: true }],
      [['metadata', 'read'], { admin: false, read: true, metadata: true }],
      [[], { admin: false, read: false, metadata: false }],
    ];
    for (const [held, expected] of table) {
      for (const needed of SCOPES) assert.equal(hasScope(token(held), needed), expected[needed], `${held.join('+') || 'none'} → ${needed}`);
    }
    assert.ok(hasScope(ENV_ADMIN, 'admin'));
  });

  it('reads need the route\'s declared scope (metadata by default), every other method admin', () => {
    const table: Array<[string, Scope | undefined, Scope]> = [
      ['GET', undefined, 'metadata'], ['HEAD', undefined, 'metadata'], ['GET', 'admin', 'admin'], ['GET', 'read', 'read'],
      ['POST', undefined, 'admin'], ['PUT', undefined, 'admin'], ['PATCH', undefined, 'admin'], ['DELETE', undefined, 'admin'], ['OPTIONS', undefined, 'admin'],
      // A write route cannot lower its own requirement.
      ['POST', 'metadata', 'admin'], ['DELETE', 'read', 'admin'],
    ];
    for (const [method, declared, expected] of table) assert.equal(requiredScope(method, declared), expected, `${method} ${declared}`);
  });

  it('MISSING_SCOPE names the scope in its body', () => {
    const err = missingScope('admin');
    assert.equal(err.status, 403);
    assert.deepEqual(err.toJSON(), { code: 'MISSING_SCOPE', message: err.message, scope: 'admin' });
  });
});

describe('Access', () => {
  it('payloads for admin and read, credentials for admin only', () => {
    const table: Array<[Principal, boolean, boolean]> = [
      [ENV_ADMIN, true, true], [token(['admin']), true, true], [token(['read']), true, false], [token(['metadata']), false, false], [token(['read', 'metadata']), true, false],
    ];
    for (const [principal, payloads, credentials] of table) {
      const access = new Access(principal);
      assert.equal(access.payloads, payloads, [...principal.scopes].join('+'));
      assert.equal(access.credentials, credentials, [...principal.scopes].join('+'));
    }
  });

  it('limits a token to its sources: filters lists, refuses the rest with 403 SOURCE_NOT_ALLOWED', () => {
    const limited = new Access(token(['read'], ['src_a', 'src_b']));
    const open = new Access(token(['read']));
    const items = [{ s: 'src_a' }, { s: 'src_c' }, { s: 'src_b' }, { s: null }];
    assert.deepEqual(limited.visible(items, (i) => i.s), [{ s: 'src_a' }, { s: 'src_b' }]);
    assert.deepEqual(open.visible(items, (i) => i.s), items);
    assert.equal(limited.allowsSource('src_a'), true);
    assert.equal(limited.allowsSource('src_c'), false);
    assert.equal(limited.allowsSource(null), false, 'a resource of no known source is for unrestricted tokens only');
    assert.equal(open.allowsSource(null), true);
    assert.doesNotThrow(() => limited.requireSource('src_b'));
    assert.throws(() => limited.requireSource('src_c'), (err: { status: number; code: string }) => err.status === 403 && err.code === 'SOURCE_NOT_ALLOWED');
  });

  it('fails closed when no access was decided', () => {
    assert.throws(() => accessOf({ access: undefined }), (err: { status: number }) => err.status === 500);
    const access = new Access(ENV_ADMIN);
    assert.equal(accessOf({ access }), access);
  });
});
