import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, it } from 'node:test';
import { ConfigState, type AdminToken, type Source } from './config-state.js';

const source = (id: string, writeKeys: string[], enabled = true): Source => ({ id, name: id, enabled, writeKeys, createdAt: 0, updatedAt: 0 });

describe('ConfigState.sourceForWriteKey', () => {
  it('finds the source of exactly its keys; near misses, prefixes and other cases find nothing', () => {
    const state = new ConfigState();
    state.apply('source:a', { kind: 'source', value: source('a', ['key-aaaaaaaaaaaaaaaa', 'key-bbbbbbbbbbbbbbbb']) });
    state.apply('source:b', { kind: 'source', value: source('b', ['other-key-cccccccccc'], false) });
    assert.equal(state.sourceForWriteKey('key-aaaaaaaaaaaaaaaa')?.id, 'a');
    assert.equal(state.sourceForWriteKey('key-bbbbbbbbbbbbbbbb')?.id, 'a');
    assert.equal(state.sourceForWriteKey('other-key-cccccccccc')?.id, 'b', 'disabled sources are found; callers decide');
    for (const miss of ['', 'key-aaaaaaaaaaaaaaa', 'key-aaaaaaaaaaaaaaaaa', 'KEY-AAAAAAAAAAAAAAAA', 'key-aaaaaaaaaaaaaaab', ' key-aaaaaaaaaaaaaaaa']) {
      assert.equal(state.sourceForWriteKey(miss), undefined, JSON.stringify(miss));
    }
  });

  it('forgets removed keys and deleted sources', () => {
    const state = new ConfigState();
    state.apply('source:a', { kind: 'source', value: source('a', ['key-1111111111111111', 'key-2222222222222222']) });
    state.apply('source:a', { kind: 'source', value: source('a', ['key-2222222222222222']) });
    assert.equal(state.sourceForWriteKey('key-1111111111111111'), undefined);
    assert.equal(state.sourceForWriteKey('key-2222222222222222')?.id, 'a');
    state.apply('source:a', null);
    assert.equal(state.sourceForWriteKey('key-2222222222222222'), undefined);
  });

  it('looks keys up by digest and compares in constant time: a near miss costs what a far miss costs', () => {
    // Not a proof of constant time (that is the design: SHA-256 index + timingSafeEqual), but a
    // guard against a regression to a comparison that exits at the first differing character.
    const state = new ConfigState();
    const key = 'k'.repeat(4096);
    state.apply('source:a', { kind: 'source', value: source('a', [key]) });
    const time = (candidate: string) => {
      const t0 = process.hrtime.bigint();
      for (let i = 0; i < 2000; i++) state.sourceForWriteKey(candidate);
      return Number(process.hrtime.bigint() - t0);
    };
    const near = `${'k'.repeat(4095)}x`;
    const far = `x${'k'.repeat(4095)}`;
    time(near); time(far);
    const samples = Array.from({ length: 5 }, () => time(near) / time(far)).sort();
    const median = samples[2]!;
    assert.ok(median > 0.33 && median < 3, `near/far time ratio ${median.toFixed(2)}`);
  });
});

describe('ConfigState admin tokens', () => {
  const sha = (text: string) => createHash('sha256').update(text).digest();
  const token = (id: string, secret: string): AdminToken => ({ id, name: id, scopes: ['read'], sourceIds: null, tokenHash: sha(secret).toString('hex'), createdAt: 0 });

  it('finds a token by the digest of its value; a tombstone or a replaced hash forgets it', () => {
    const state = new ConfigState();
    state.apply('admin-token:t1', { kind: 'admin-token', value: token('t1', 'secret-one') });
    state.apply('admin-token:t2', { kind: 'admin-token', value: token('t2', 'secret-two') });
    assert.equal(state.adminTokenByHash(sha('secret-one'))?.id, 't1');
    assert.equal(state.adminTokenByHash(sha('secret-two'))?.id, 't2');
    assert.equal(state.adminTokenByHash(sha('secret-on')), undefined);
    assert.equal(state.adminTokenByHash(Buffer.alloc(0)), undefined);
    assert.deepEqual(state.adminTokens().map((t) => t.id), ['t1', 't2']);
    state.apply('admin-token:t1', null);
    assert.equal(state.adminTokenByHash(sha('secret-one')), undefined);
    assert.equal(state.adminToken('t1'), undefined);
    state.apply('admin-token:t2', { kind: 'admin-token', value: token('t2', 'secret-three') });
    assert.equal(state.adminTokenByHash(sha('secret-two')), undefined);
    assert.equal(state.adminTokenByHash(sha('secret-three'))?.id, 't2');
  });
});
