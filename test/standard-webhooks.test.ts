// Standard Webhooks signatures and secret rotation on the real stack: a receiver that verifies
// every request with the `standardwebhooks` package (with the secret it holds at the time) and
// with the seed's HMAC-SHA1 recipe for X-Signature, before, during and after a rotation; the
// secret's value is shown once; the old one stops signing when its grace period ends.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Webhook } from 'standardwebhooks';
import { verifySignature } from '../tools/demo/receiver.js';
import { requestJson } from './support/http.js';
import { startReceiver, type ReceivedRequest, type Receiver } from './support/receiver.js';
import { newSecret } from './support/secrets.js';
import { pipelineEnv, setupTopics, startService, type RunningService } from './support/services.js';
import { uniquePrefix } from './support/stack.js';

/** Whether a request verifies with a Standard Webhooks secret (the package also checks the timestamp is recent). */
function verifiesWith(secret: string, req: ReceivedRequest): boolean {
  try {
    new Webhook(secret).verify(req.text, req.headers as Record<string, string>);
    return true;
  } catch {
    return false;
  }
}

describe('Standard Webhooks signatures with secret rotation', () => {
  const prefix = uniquePrefix('stdwebhooks');
  const token = newSecret('stdwebhooks admin token', 'stdwh-admin-');
  const sharedSecret = newSecret('stdwebhooks shared secret', 'ss-');
  const services: RunningService[] = [];
  /** Answered 503 once, to see a retry carry the same webhook-id. */
  const flakyOnce = new Set<string>();
  let control: RunningService;
  let ingest: RunningService;
  let receiver: Receiver;
  let destinationId: string;
  const api = (method: string, path: string, body?: unknown) => requestJson(method, `${control.url}${path}`, { token, body });
  const keys: { first?: string; firstId?: string; second?: string } = {};
  const rotatedAt = { ms: 0 };
  let writeKey = '';
  const sendAs = async (calls: Array<Record<string, unknown>>) => {
    const res = await requestJson('POST', `${ingest.url}/v1/batch`, { body: { batch: calls }, headers: { authorization: `Basic ${Buffer.from(`${writeKey}:`).toString('base64')}` } });
    assert.equal(res.status, 200, res.text);
  };
  const track = (phase: string, i: number) => ({ type: 'track', messageId: `${phase}-${i}-${prefix}`, userId: `u${i}`, event: 'Order Completed', properties: { phase, i } });
  const received = (phase: string) => receiver.requests.filter((r) => r.text.includes(`"phase":"${phase}"`));

  before(async () => {
    receiver = await startReceiver((req) => {
      const id = JSON.parse(req.text).messageId as string;
      if (flakyOnce.delete(id)) return { status: 503 };
      return {};
    });
    const env = pipelineEnv(prefix, { SWITCHYARD_ADMIN_TOKEN: token, SWITCHYARD_ALLOWED_CIDRS: '127.0.0.0/8', SWITCHYARD_RETRY_TIERS: '300ms', SWITCHYARD_RETRY_DEADLINE: '30s' });
    await setupTopics(env);
    [control, ingest] = await Promise.all([startService('control', env), startService('ingest', env)]);
    services.push(control, ingest, ...(await Promise.all([startService('fanout', env), startService('delivery', env)])));
    const source = await api('POST', '/v1/sources', { name: 'Signed', id: 'signed' });
    assert.equal(source.status, 201, source.text);
    writeKey = source.body.writeKeys[0];
  });
  after(async () => {
    await Promise.all(services.map((s) => s.stop()));
    await receiver?.close();
  });

  it('signing.standard on create generates a whsec_ secret, shown once; GET lists its id and creation time only', async () => {
    const created = await api('POST', '/v1/destinations', {
      sourceId: 'signed', type: 'webhooks', settings: { sharedSecret, webhooks: [{ url: receiver.url }] }, signing: { standard: true },
    });
    assert.equal(created.status, 201, created.text);
    destinationId = created.body.id;
    const shown = created.body.signing.newSecret;
    assert.match(shown.secret, /^whsec_[A-Za-z0-9+/]+={0,2}$/);
    assert.ok(Buffer.from(shown.secret.slice(6), 'base64').length >= 24);
    keys.first = shown.secret;
    keys.firstId = shown.id;
    const got = await api('GET', `/v1/destinations/${destinationId}`);
    assert.deepEqual(got.body.signing, { standard: true, secrets: [{ id: shown.id, createdAt: shown.createdAt, expiresAt: null }] });
    assert.ok(!got.text.includes(shown.secret.slice(6)), 'the value is never shown again');
    const headerRefused = await api('PATCH', `/v1/destinations/${destinationId}`, { settings: { webhooks: [{ url: receiver.url, headers: { 'Webhook-Signature': 'v1,forged' } }] } });
    assert.deepEqual([headerRefused.status, headerRefused.body.code], [400, 'RESERVED_HEADER']);
    const refused = await api('POST', `/v1/destinations/${destinationId}/secrets/rotate`, { gracePeriod: '1 day' });
    assert.deepEqual([refused.status, refused.body.code, refused.body.field], [400, 'INVALID_FIELD', 'gracePeriod']);
  });

  it('before a rotation: every request verifies with the secret (standardwebhooks) and with X-Signature (HMAC-SHA1); a retry keeps its webhook-id', async () => {
    await sleep(500);
    flakyOnce.add(track('before', 0).messageId);
    await sendAs(Array.from({ length: 5 }, (_, i) => track('before', i)));
    await receiver.waitFor(() => received('before').length >= 6);
    for (const req of received('before')) {
      assert.ok(verifiesWith(keys.first!, req), 'webhook-signature verifies');
      assert.ok(verifySignature(JSON.parse(req.text), req.headers['x-signature'] as string, sharedSecret), 'X-Signature verifies');
      assert.equal(String(req.headers['webhook-signature']).split(' ').length, 1);
    }
    const retried = receiver.forMessage(track('before', 0).messageId);
    assert.equal(retried.length, 2);
    assert.equal(retried[0]!.headers['webhook-id'], retried[1]!.headers['webhook-id']);
    assert.equal(retried[0]!.headers['webhook-id'], `${track('before', 0).messageId}:${destinationId}`);
  });

  it('during the grace period both secrets sign: a receiver holding either one verifies every request', async () => {
    const rotated = await api('POST', `/v1/destinations/${destinationId}/secrets/rotate`, { gracePeriod: '20s' });
    assert.equal(rotated.status, 201, rotated.text);
    keys.second = rotated.body.signingSecret.secret;
    rotatedAt.ms = Date.now();
    assert.notEqual(keys.second, keys.first);
    assert.deepEqual(rotated.body.destination.signing.secrets.map((s: { id: string }) => s.id), [keys.firstId, rotated.body.signingSecret.id]);
    assert.ok(rotated.body.destination.signing.secrets[0].expiresAt !== null);
    await sleep(500);
    await sendAs(Array.from({ length: 5 }, (_, i) => track('during', i)));
    await receiver.waitFor(() => received('during').length >= 5);
    assert.ok(Date.now() - rotatedAt.ms < 19_000, 'still inside the grace period');
    for (const req of received('during')) {
      assert.equal(String(req.headers['webhook-signature']).split(' ').length, 2);
      assert.ok(verifiesWith(keys.first!, req), 'the old secret still verifies');
      assert.ok(verifiesWith(keys.second!, req), 'the new secret verifies');
      assert.ok(verifySignature(JSON.parse(req.text), req.headers['x-signature'] as string, sharedSecret));
    }
  });

  it('after the grace period only the new secret signs; the old one is no longer listed', async () => {
    await sleep(Math.max(0, rotatedAt.ms + 20_500 - Date.now()));
    await sendAs(Array.from({ length: 5 }, (_, i) => track('after', i)));
    await receiver.waitFor(() => received('after').length >= 5);
    for (const req of received('after')) {
      assert.equal(String(req.headers['webhook-signature']).split(' ').length, 1);
      assert.ok(verifiesWith(keys.second!, req));
      assert.ok(!verifiesWith(keys.first!, req), 'the old secret was dropped');
      assert.ok(verifySignature(JSON.parse(req.text), req.headers['x-signature'] as string, sharedSecret));
    }
    const got = await api('GET', `/v1/destinations/${destinationId}`);
    assert.equal(got.body.signing.secrets.length, 1);
  });

  it('signing.standard false stops the headers (X-Signature stays) and drops the secrets; rotation then is refused', async () => {
    const off = await api('PATCH', `/v1/destinations/${destinationId}`, { signing: { standard: false } });
    assert.deepEqual(off.body.signing, { standard: false, secrets: [] });
    await sleep(500);
    await sendAs([track('off', 0)]);
    await receiver.waitFor(() => received('off').length >= 1);
    const [req] = received('off');
    assert.equal(req!.headers['webhook-signature'], undefined);
    assert.ok(verifySignature(JSON.parse(req!.text), req!.headers['x-signature'] as string, sharedSecret));
    const refused = await api('POST', `/v1/destinations/${destinationId}/secrets/rotate`);
    assert.deepEqual([refused.status, refused.body.code], [400, 'SIGNING_NOT_ENABLED']);
  });
});
