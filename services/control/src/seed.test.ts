import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConfigState } from '@switchyard/platform/config-view/config-state';
import { retryPolicyLimits } from '@switchyard/platform/destination-retry';
import { AddressPolicy } from '@switchyard/platform/net/address-policy';
import { DEFAULT_RETRY_POLICY } from '@switchyard/platform/retry-schedule';
import { destinationSchemas } from './api-schemas.js';
import type { ConfigChange } from './config-store.js';
import { isNotificationEndpoint, notificationEndpointSchema } from './notification-endpoints.js';
import { applySeed, withCertificateFiles } from './seed.js';

describe('seed file: client certificates from files', () => {
  const files: Record<string, string> = { '/etc/seed/tls/client.pem': 'CERT', '/run/secrets/client.key': 'KEY' };
  const read = (path: string) => { const text = files[path]; if (text === undefined) throw new Error('ENOENT'); return text; };
  const seed = (clientCertificate: unknown) => ({ destinations: [{ id: 'd', settings: { webhooks: [{ url: 'https://a.example/x' }, { url: 'https://b.example/y', clientCertificate }] } }] });

  it('reads certFile and keyFile (relative to the seed file) into cert and key; inline PEM and other webhooks stay as they are', () => {
    const out = withCertificateFiles(seed({ certFile: 'tls/client.pem', keyFile: '/run/secrets/client.key' }), '/etc/seed', read);
    assert.deepEqual(out, seed({ cert: 'CERT', key: 'KEY' }));
    assert.deepEqual(withCertificateFiles(seed({ cert: 'C', key: 'K' }), '/etc/seed', read), seed({ cert: 'C', key: 'K' }));
    assert.deepEqual(withCertificateFiles(seed(null), '/etc/seed', read), seed(null));
  });

  it('a file that cannot be read stops the seed, naming the entry and the file', () => {
    assert.throws(() => withCertificateFiles(seed({ certFile: 'tls/client.pem', keyFile: 'missing.key' }), '/etc/seed', read),
      /seed destinations\[0\]\.settings\.webhooks\[1\]\.clientCertificate\.keyFile: cannot read missing\.key/);
  });
});

describe('seed file: notification endpoints', () => {
  const policy = new AddressPolicy([]);
  const secret = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;
  const otherSecret = `whsec_${Buffer.alloc(32, 9).toString('base64')}`;

  /** The config view and store a seed sees: a ConfigState the store's writes are applied to. */
  function setup(start = 1_000) {
    const state = new ConfigState();
    const writes: ConfigChange[][] = [];
    let now = start;
    const deps = {
      view: { state },
      store: { write: async (...changes: ConfigChange[]) => { writes.push(changes); for (const c of changes) state.apply(c.key, c.record); } },
      clock: () => now,
      destinationSchemas: destinationSchemas(policy, retryPolicyLimits(DEFAULT_RETRY_POLICY.tiersMs)),
      notificationEndpointSchema: notificationEndpointSchema(policy),
    };
    return { state, writes, deps, advance: (ms: number) => { now += ms; } };
  }
  const ops = (fields: Record<string, unknown> = {}) => ({ id: 'ops', url: 'https://ops.example.com/switchyard', eventTypes: ['destination.failing', 'destination.disabled'], ...fields });

  it('writes a new endpoint as a notifications destination with no source, signed with the given secret', async () => {
    const { state, deps } = setup();
    assert.deepEqual(await applySeed({ notificationEndpoints: [ops({ secret })] }, deps), { written: 1, unchanged: 0 });
    const stored = state.destination('ops')!;
    assert.ok(isNotificationEndpoint(stored));
    assert.equal(stored.sourceId, '');
    assert.equal(stored.enabled, true);
    assert.equal(stored.standardSignatures, true);
    assert.deepEqual(stored.webhooks.map((w) => w.url), ['https://ops.example.com/switchyard']);
    assert.deepEqual(stored.notificationTypes, ['destination.failing', 'destination.disabled']);
    assert.deepEqual(stored.signingSecrets.map((s) => [s.secret, s.expiresAt]), [[secret, null]]);
    assert.equal(stored.createdAt, 1_000);
  });

  it('an unchanged entry writes nothing on the next start, with or without a secret in the file', async () => {
    for (const entry of [ops({ secret }), ops()]) {
      const { state, writes, deps, advance } = setup();
      await applySeed({ notificationEndpoints: [entry] }, deps);
      const first = state.destination('ops')!;
      advance(60_000);
      assert.deepEqual(await applySeed({ notificationEndpoints: [entry] }, deps), { written: 0, unchanged: 1 });
      assert.equal(writes.length, 1);
      assert.deepEqual(state.destination('ops'), first);
    }
  });

  it('without a secret one is generated once and kept; an edit keeps it and createdAt', async () => {
    const { state, deps, advance } = setup();
    await applySeed({ notificationEndpoints: [ops()] }, deps);
    const [generated] = state.destination('ops')!.signingSecrets;
    assert.match(generated!.secret, /^whsec_/);
    advance(60_000);
    assert.deepEqual(await applySeed({ notificationEndpoints: [ops({ url: 'https://ops.example.com/v2', eventTypes: ['replay.completed'] })] }, deps), { written: 1, unchanged: 0 });
    const edited = state.destination('ops')!;
    assert.deepEqual(edited.signingSecrets, [generated]);
    assert.deepEqual(edited.notificationTypes, ['replay.completed']);
    assert.equal(edited.createdAt, 1_000);
    assert.equal(edited.updatedAt, 61_000);
  });

  it('a different secret in the file replaces the stored ones at once', async () => {
    const { state, deps } = setup();
    await applySeed({ notificationEndpoints: [ops({ secret })] }, deps);
    assert.deepEqual(await applySeed({ notificationEndpoints: [ops({ secret: otherSecret })] }, deps), { written: 1, unchanged: 0 });
    assert.deepEqual(state.destination('ops')!.signingSecrets.map((s) => s.secret), [otherSecret]);
  });

  it('refuses, naming the entry, a malformed secret or event type, and an id a destination has', async () => {
    const { state, writes, deps } = setup();
    await assert.rejects(applySeed({ notificationEndpoints: [ops({ secret: 'whsec_c2hvcnQ=' })] }, deps), /seed notificationEndpoints\[0\]\.secret: .*a Standard Webhooks secret/);
    await assert.rejects(applySeed({ notificationEndpoints: [ops({ secret: 'not-a-secret' })] }, deps), /notificationEndpoints\[0\]\.secret/);
    await assert.rejects(applySeed({ notificationEndpoints: [ops({ eventTypes: ['destination.deleted'] })] }, deps), /seed notificationEndpoints\[0\]\.eventTypes/);
    await assert.rejects(applySeed({ notificationEndpoints: [{ url: 'https://ops.example.com/', eventTypes: ['replay.completed'] }] }, deps), /seed notificationEndpoints\[0\]\.id/);
    const destination = { id: 'ops', sourceId: 'web', settings: { webhooks: [{ url: 'https://hooks.example.com/in' }] } };
    const source = { id: 'web', name: 'Website' };
    await assert.rejects(applySeed({ sources: [source], destinations: [destination], notificationEndpoints: [ops()] }, deps), /seed destinations\[0\]: ops is a notification endpoint's id/);
    assert.equal(writes.length, 0, 'a refused file writes nothing');
    await applySeed({ sources: [source], destinations: [destination] }, deps);
    await assert.rejects(applySeed({ notificationEndpoints: [ops()] }, deps), /seed notificationEndpoints\[0\]: ops is a destination's id/);
    assert.equal(state.destination('ops')!.type, 'webhooks');
  });
});
