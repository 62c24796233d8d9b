import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Webhook } from 'standardwebhooks';
import type { Destination } from '@switchyard/platform/config-view/config-state';
import { newSigningSecret } from '@switchyard/platform/signing/standard-webhooks';
import { standardHeaders, standardSigning } from './standard-signing.js';

const T = Date.now();
const current = newSigningSecret(T - 60_000);
const previous = { ...newSigningSecret(T - 120_000), expiresAt: T + 1000 };
const destination = (over: Partial<Destination> = {}): Destination => ({
  id: 'd', sourceId: 's', name: 'hooks', type: 'webhooks', enabled: true, sharedSecret: null, webhooks: [], createdAt: 0, updatedAt: 0, filter: null,
  standardSignatures: true, rateLimit: null, signingSecrets: [previous, current], retry: null, disabledReason: null, disabledAt: null, notificationTypes: [], ...over,
});

describe('standardSigning: the Standard Webhooks headers of one attempt', () => {
  it('off: no headers', () => {
    assert.equal(standardSigning(destination({ standardSignatures: false }), 'm:d', T), undefined);
  });

  it('during a grace period both secrets sign; a receiver with either verifies; the id is the task id', () => {
    const body = Buffer.from('{"type":"track","messageId":"m"}');
    const signing = standardSigning(destination(), 'm:d', T)!;
    const headers = standardHeaders(signing, body, T);
    assert.equal(headers['webhook-id'], 'm:d');
    assert.equal(headers['webhook-timestamp'], String(Math.floor(T / 1000)));
    assert.equal(headers['webhook-signature']!.split(' ').length, 2);
    for (const s of [previous, current]) assert.ok(new Webhook(s.secret).verify(body, headers));
  });

  it('after the grace period only the current secret signs (decided per attempt, no config change)', () => {
    const d = destination();
    const body = Buffer.from('{}');
    const headers = standardHeaders(standardSigning(d, 'm:d', T + 1000)!, body, T);
    assert.equal(headers['webhook-signature']!.split(' ').length, 1);
    assert.ok(new Webhook(current.secret).verify(body, headers));
    assert.throws(() => new Webhook(previous.secret).verify(body, headers));
  });
});
