// Auto-disable and notifications on the real stack: a destination whose receiver always answers
// 500 is disabled after SWITCHYARD_DISABLE_AFTER (short here), its pending tasks are dead-lettered
// with destination_disabled and can be replayed, a notification endpoint receives signed
// destination.failing then destination.disabled, a success in between resets the clock, enabling
// it again resumes delivery, and a failing notification endpoint is never notified about.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Webhook } from 'standardwebhooks';
import { requestJson } from './support/http.js';
import { startReceiver, type ReceivedRequest, type Receiver } from './support/receiver.js';
import { newSecret } from './support/secrets.js';
import { pipelineEnv, setupTopics, startService, type RunningService } from './support/services.js';
import { uniquePrefix } from './support/stack.js';

const DISABLE_AFTER_MS = 8_000;

function verifiesWith(secret: string, req: ReceivedRequest): boolean {
  try {
    new Webhook(secret).verify(req.text, req.headers as Record<string, string>);
    return true;
  } catch {
    return false;
  }
}

async function until<T>(what: string, probe: () => Promise<T | undefined> | T | undefined, timeoutMs = 60_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(200);
  }
}

describe('auto-disable of failing destinations, and notification endpoints', () => {
  const prefix = uniquePrefix('autodisable');
  const token = newSecret('auto-disable admin token', 'autodis-admin-');
  const services: RunningService[] = [];
  let control: RunningService;
  let ingest: RunningService;
  let hooks: Receiver;
  let notices: Receiver;
  let brokenNotices: Receiver;
  let writeKey = '';
  let noticeSecret = '';
  let brokenEndpointId = '';
  let destinationId = '';
  /** What the destination's receiver answers: 500 while failing, except for bodies of phase "ok". */
  const receiverMode = { failing: true };
  const api = (method: string, path: string, body?: unknown) => requestJson(method, `${control.url}${path}`, { token, body });
  const send = async (phase: string, count = 1) => {
    const batch = Array.from({ length: count }, (_, i) => ({ type: 'track', messageId: `${phase}-${i}-${prefix}`, userId: `u${i}`, event: 'Order Completed', properties: { phase } }));
    const res = await requestJson('POST', `${ingest.url}/v1/batch`, { body: { batch }, headers: { authorization: `Basic ${Buffer.from(`${writeKey}:`).toString('base64')}` } });
    assert.equal(res.status, 200, res.text);
  };
  const noticesOf = (type: string) => notices.requests.filter((r) => (JSON.parse(r.text) as { type: string }).type === type);

  before(async () => {
    hooks = await startReceiver((req) => (req.text.includes('"phase":"ok"') || !receiverMode.failing ? {} : { status: 500 }));
    notices = await startReceiver();
    brokenNotices = await startReceiver(() => ({ status: 500 }));
    const env = pipelineEnv(prefix, {
      SWITCHYARD_ADMIN_TOKEN: token, SWITCHYARD_ALLOWED_CIDRS: '127.0.0.0/8',
      // Failed tasks come back every 300 ms and stay pending well past the disable time.
      SWITCHYARD_RETRY_TIERS: '300ms', SWITCHYARD_RETRY_DEADLINE: '2m',
      // No circuit opens: every retry is a request, so the failing clock is reported all along.
      DELIVERY_BREAKER_THRESHOLD: '100000',
      SWITCHYARD_DISABLE_AFTER: `${DISABLE_AFTER_MS / 1000}s`,
    });
    await setupTopics(env);
    [control, ingest] = await Promise.all([startService('control', env), startService('ingest', env)]);
    services.push(control, ingest, ...(await Promise.all([startService('fanout', env), startService('delivery', env)])));
    const source = await api('POST', '/v1/sources', { name: 'Failing', id: 'failing' });
    assert.equal(source.status, 201, source.text);
    writeKey = source.body.writeKeys[0];
  });
  after(async () => {
    await Promise.all(services.map((s) => s.stop()));
    await Promise.all([hooks?.close(), notices?.close(), brokenNotices?.close()]);
  });

  it('creates notification endpoints with a whsec_ secret shown once; lists, gets and refuses unknown types', async () => {
    const created = await api('POST', '/v1/notification-endpoints', { url: notices.url, eventTypes: ['destination.failing', 'destination.disabled', 'message.dead_lettered'] });
    assert.equal(created.status, 201, created.text);
    assert.match(created.body.signingSecret.secret, /^whsec_/);
    noticeSecret = created.body.signingSecret.secret;
    const got = await api('GET', `/v1/notification-endpoints/${created.body.id}`);
    assert.equal(got.status, 200, got.text);
    assert.deepEqual(got.body.eventTypes, ['destination.failing', 'destination.disabled', 'message.dead_lettered']);
    assert.ok(!got.text.includes(noticeSecret.slice(6)), 'the secret is never shown again');
    const broken = await api('POST', '/v1/notification-endpoints', { url: brokenNotices.url, eventTypes: ['destination.failing', 'destination.disabled', 'message.dead_lettered', 'replay.completed'] });
    assert.equal(broken.status, 201, broken.text);
    brokenEndpointId = broken.body.id;
    const list = await api('GET', '/v1/notification-endpoints');
    assert.equal(list.body.notificationEndpoints.length, 2);
    const bad = await api('POST', '/v1/notification-endpoints', { url: notices.url, eventTypes: ['destination.exploded'] });
    assert.equal(bad.status, 400, bad.text);
    // Notification endpoints are not destinations.
    assert.equal((await api('GET', `/v1/destinations/${brokenEndpointId}`)).status, 404);
    const destinations = await api('GET', '/v1/destinations');
    assert.ok(!destinations.text.includes(brokenEndpointId));
  });

  it('notifies destination.failing, signed, at the first failure', async () => {
    const created = await api('POST', '/v1/destinations', { sourceId: 'failing', type: 'webhooks', settings: { webhooks: [{ url: hooks.url }] } });
    assert.equal(created.status, 201, created.text);
    destinationId = created.body.id;
    await send('fail-a', 5);
    const failing = await until('destination.failing', () => noticesOf('destination.failing')[0], 30_000);
    assert.ok(verifiesWith(noticeSecret, failing), 'signed with the endpoint\'s secret (Standard Webhooks)');
    const body = JSON.parse(failing.text) as { type: string; timestamp: string; data: { destinationId: string; failingSince: string } };
    assert.equal(body.data.destinationId, destinationId);
    assert.ok(!Number.isNaN(Date.parse(body.timestamp)));
  });

  it('a success resets the clock: still enabled past the period counted from the first failure', async () => {
    await sleep(DISABLE_AFTER_MS / 2);
    await send('ok');
    await hooks.waitFor((reqs) => reqs.some((r) => r.text.includes('"phase":"ok"')), 30_000);
    const successAt = Date.now();
    // The failing tasks keep failing; past the first failure's period, and short of the success's.
    await sleep(DISABLE_AFTER_MS * 0.75);
    const got = await api('GET', `/v1/destinations/${destinationId}`);
    assert.equal(got.body.enabled, true, `disabled ${Date.now() - successAt} ms after a success`);
    assert.equal(got.body.disabledReason, null);
  });

  it('disables the destination once every attempt failed for the period, and notifies destination.disabled', async () => {
    const disabled = await until('the destination disabled', async () => {
      const got = await api('GET', `/v1/destinations/${destinationId}`);
      return got.body.enabled === false ? got.body : undefined;
    }, 60_000);
    assert.equal(disabled.disabledReason, 'failing');
    assert.ok(!Number.isNaN(Date.parse(disabled.disabledAt)));
    const notice = await until('destination.disabled', () => noticesOf('destination.disabled')[0], 30_000);
    assert.ok(verifiesWith(noticeSecret, notice));
    assert.equal((JSON.parse(notice.text) as { data: { destinationId: string; reason: string } }).data.reason, 'failing');
    // destination.failing came first, once per failing period (the reset made a second period).
    assert.ok(noticesOf('destination.failing')[0]!.at < notice.at);
  });

  it('dead-letters the pending tasks with destination_disabled, counted in a message.dead_lettered notice', async () => {
    const letters = await until('destination_disabled dead letters', async () => {
      const r = await api('GET', `/v1/dead-letters?destinationId=${destinationId}&reason=destination_disabled`);
      return r.body.deadLetters?.length >= 5 ? r.body.deadLetters as Array<{ id: string }> : undefined;
    }, 30_000);
    assert.ok(letters.length >= 5);
    const notice = await until('message.dead_lettered', () => noticesOf('message.dead_lettered').find((r) => r.text.includes(destinationId)), 90_000);
    assert.ok(verifiesWith(noticeSecret, notice));
    const data = (JSON.parse(notice.text) as { data: { count: number; reasons: Record<string, number> } }).data;
    assert.ok(data.count >= 1 && (data.reasons.destination_disabled ?? 0) >= 1, notice.text);
  });

  it('enabling it again clears the reason and resumes delivery; its dead letters replay', async () => {
    receiverMode.failing = false;
    const patched = await api('PATCH', `/v1/destinations/${destinationId}`, { enabled: true });
    assert.equal(patched.status, 200, patched.text);
    assert.equal(patched.body.disabledReason, null);
    assert.equal(patched.body.disabledAt, null);
    await send('after');
    await hooks.waitFor((reqs) => reqs.some((r) => r.text.includes('"phase":"after"') ), 30_000);
    const letters = await api('GET', `/v1/dead-letters?destinationId=${destinationId}&reason=destination_disabled`);
    const replay = await api('POST', '/v1/dead-letters/replay', { ids: letters.body.deadLetters.map((l: { id: string }) => l.id) });
    assert.equal(replay.status < 300, true, replay.text);
    await hooks.waitFor((reqs) => reqs.filter((r) => r.text.includes('"phase":"fail-a"') && r.at > Date.now() - 60_000).length >= 5, 30_000);
  });

  it('never notifies about a notification endpoint, however it fails', async () => {
    assert.ok(brokenNotices.requests.length > 0, 'the failing endpoint was sent notifications');
    for (const r of notices.requests) assert.ok(!r.text.includes(brokenEndpointId), `a notice about a notification endpoint: ${r.text}`);
    const endpoint = await api('GET', `/v1/notification-endpoints/${brokenEndpointId}`);
    assert.equal(endpoint.body.enabled, true, 'notification endpoints are never disabled');
  });
});
