import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { describe, it } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { activeSigningSecrets, newSigningSecret, rotateSigningSecrets, secretKey, standardSignature } from './standard-webhooks.js';

const T = Date.UTC(2026, 10, 22, 10);
const H = 3_600_000;

describe('Standard Webhooks secrets and signatures', () => {
  it('a new secret is whsec_ + base64 of 32 random bytes, with an id and no expiry', () => {
    const s = newSigningSecret(T);
    assert.match(s.secret, /^whsec_[A-Za-z0-9+/]{43}=$/);
    assert.equal(secretKey(s.secret).length, 32);
    assert.match(s.id, /^whs_[0-9a-f]{16}$/);
    assert.deepEqual([s.createdAt, s.expiresAt], [T, null]);
  });

  it('the signature is what the standardwebhooks package verifies, for each secret of a rotation', () => {
    const a = newSigningSecret(T);
    const b = newSigningSecret(T);
    const body = Buffer.from('{"type":"track","event":"Café ☕"}');
    const ts = Math.floor(T / 1000);
    const header = standardSignature([secretKey(a.secret), secretKey(b.secret)], 'msg-1:dst', ts, body);
    assert.equal(header.split(' ').length, 2);
    const headers = { 'webhook-id': 'msg-1:dst', 'webhook-timestamp': String(ts), 'webhook-signature': header };
    const expected = createHmac('sha256', secretKey(a.secret)).update(`msg-1:dst.${ts}.`).update(body).digest('base64');
    assert.equal(header.split(' ')[0], `v1,${expected}`);
    // The package checks the timestamp against its clock: sign "now" for it.
    const now = Math.floor(Date.now() / 1000);
    const live = { ...headers, 'webhook-timestamp': String(now), 'webhook-signature': standardSignature([secretKey(a.secret), secretKey(b.secret)], 'msg-1:dst', now, body) };
    for (const s of [a, b]) assert.deepEqual(new Webhook(s.secret).verify(body.toString(), live), JSON.parse(body.toString()));
    assert.throws(() => new Webhook(newSigningSecret(T).secret).verify(body.toString(), live));
  });

  it('rotation: the new one is current, the previous signs until the grace period ends, expired ones are dropped', () => {
    const first = newSigningSecret(T);
    const r1 = rotateSigningSecrets([first], T + H, 24 * H);
    assert.deepEqual(r1.secrets.map((s) => [s.id, s.expiresAt]), [[first.id, T + 25 * H], [r1.created.id, null]]);
    assert.deepEqual(activeSigningSecrets(r1.secrets, T + 25 * H - 1).length, 2);
    assert.deepEqual(activeSigningSecrets(r1.secrets, T + 25 * H).map((s) => s.id), [r1.created.id]);
    // A second rotation inside the grace period: the first keeps its end, the second gets one.
    const r2 = rotateSigningSecrets(r1.secrets, T + 2 * H, 1 * H);
    assert.deepEqual(r2.secrets.map((s) => s.expiresAt), [T + 25 * H, T + 3 * H, null]);
    // After every grace period, a rotation drops the old ones from the record.
    const r3 = rotateSigningSecrets(r2.secrets, T + 30 * H, 0);
    assert.deepEqual(r3.secrets.map((s) => s.id), [r3.created.id]);
  });
});
