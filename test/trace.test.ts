// The per-message trace and the usage counts through the admin API, on the real stack: calls go in
// through the ingest API, fan-out and delivery record what they did on the delivery-attempts topic,
// receivers on 127.0.0.1 answer 200, 503-then-200 (two retry tiers) or 410 (dead letter).
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { makeDestination, makeSource, writeConfig } from './support/config.js';
import { requestJson } from './support/http.js';
import { startReceiver, type Receiver } from './support/receiver.js';
import { pipelineEnv, setupTopics, startService, type RunningService } from './support/services.js';
import { uniquePrefix } from './support/stack.js';

/** Polls `read` until `done` holds (or fails with the last value after `timeoutMs`). */
async function eventually<T>(read: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) assert.fail(`condition not met within ${timeoutMs} ms; last value: ${JSON.stringify(value)}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

describe('trace and usage: GET /v1/messages/{id} and GET /v1/sources/{id}/usage', () => {
  const prefix = uniquePrefix('trace');
  const token = `trace-admin-${randomUUID()}`;
  const services: RunningService[] = [];
  const receivers: Receiver[] = [];
  let control: RunningService;
  let ingest: RunningService;
  const main = makeSource();
  const quiet = makeSource();
  const idle = makeSource();
  const api = (path: string) => requestJson('GET', `${control.url}${path}`, { token });
  const send = (source: typeof main, body: unknown) =>
    requestJson('POST', `${ingest.url}/v1/batch`, { body, headers: { authorization: `Basic ${Buffer.from(`${source.writeKeys[0]}:`).toString('base64')}` } });
  let ok: ReturnType<typeof makeDestination>;
  let flaky: ReturnType<typeof makeDestination>;
  let gone: ReturnType<typeof makeDestination>;
  let filteredDestination: ReturnType<typeof makeDestination>;
  const delivered = `trace-${randomUUID()}`;
  const filtered = `trace-${randomUUID()}`;

  before(async () => {
    const calls = new Map<string, number>();
    const [okReceiver, flakyReceiver, goneReceiver, quietReceiver] = await Promise.all([
      startReceiver(),
      // Per message: 503, 503, then 200.
      startReceiver((req) => {
        const id = JSON.parse(req.text).messageId as string;
        const n = (calls.get(id) ?? 0) + 1;
        calls.set(id, n);
        return { status: n <= 2 ? 503 : 200 };
      }),
      startReceiver(() => ({ status: 410, body: 'gone' })),
      startReceiver(),
    ]);
    receivers.push(okReceiver!, flakyReceiver!, goneReceiver!, quietReceiver!);
    ok = makeDestination(main.id, { webhooks: [{ url: okReceiver!.url, headers: {}, clientCertificate: null }] });
    flaky = makeDestination(main.id, { webhooks: [{ url: flakyReceiver!.url, headers: {}, clientCertificate: null }] });
    gone = makeDestination(main.id, { webhooks: [{ url: goneReceiver!.url, headers: {}, clientCertificate: null }] });
    filteredDestination = makeDestination(quiet.id, { webhooks: [{ url: quietReceiver!.url, headers: {}, clientCertificate: null }] });

    const env = pipelineEnv(prefix, {
      SWITCHYARD_ADMIN_TOKEN: token, SWITCHYARD_ALLOWED_CIDRS: '127.0.0.0/8',
      SWITCHYARD_RETRY_TIERS: '300ms,600ms', SWITCHYARD_RETRY_DEADLINE: '20s', SWITCHYARD_USAGE_INTERVAL: '300ms',
    });
    await setupTopics(env);
    await writeConfig(prefix, { sources: [main, quiet, idle], destinations: [ok, flaky, gone, filteredDestination] });
    [control, ingest] = await Promise.all([startService('control', env), startService('ingest', env)]);
    services.push(control, ingest, ...(await Promise.all([startService('fanout', env), startService('delivery', env)])));

    const first = await send(main, { batch: [
      { type: 'track', messageId: delivered, userId: 'u1', event: 'Order Completed' },
      { type: 'track', userId: 'u2' }, // no event name: refused alone
    ] });
    assert.equal(first.status, 200, first.text);
    assert.equal(first.body.rejected?.length, 1);
    const second = await send(quiet, { batch: [{ type: 'track', messageId: filtered, userId: 'u3', event: 'Hidden', integrations: { Webhooks: false } }] });
    assert.equal(second.status, 200, second.text);
    assert.equal((await send({ ...main, writeKeys: ['not-a-key'] }, { batch: [] })).status, 401);
  });
  after(async () => {
    await Promise.all(services.map((s) => s.stop()));
    await Promise.all(receivers.map((r) => r.close()));
  });

  it('one message to three destinations: delivered at once, delivered after two retry tiers (503, 503, 200), dead-lettered on 410', async () => {
    const settled = (d: { state: string }) => d.state === 'delivered' || d.state === 'dead_lettered';
    const { body } = await eventually(() => api(`/v1/messages/${delivered}`), (r) => r.status === 200 && r.body.destinations.length === 3 && r.body.destinations.every(settled));
    assert.equal(body.messageId, delivered);
    assert.equal(body.sourceId, main.id);
    assert.equal(body.type, 'track');
    assert.ok(Math.abs(Date.parse(body.receivedAt) - Date.now()) < 60_000, body.receivedAt);
    const byId = new Map((body.destinations as Array<Record<string, any>>).map((d) => [d.destinationId, d]));

    const once = byId.get(ok.id)!;
    assert.deepEqual([once.state, once.tier, once.nextAttemptAt, once.deadLetterReason], ['delivered', 0, null, null]);
    assert.equal(once.attempts.length, 1);
    assert.deepEqual({ ...once.attempts[0], at: undefined, latencyMs: undefined }, { attempt: 1, urlIndex: 0, at: undefined, tier: 0, outcome: 'delivered', status: 200, error: null, latencyMs: undefined, retryPolicy: 'default', retryStep: null });
    assert.ok(once.attempts[0].latencyMs >= 0 && once.attempts[0].latencyMs < 5000);

    const retried = byId.get(flaky.id)!;
    assert.equal(retried.state, 'delivered');
    assert.equal(retried.tier, 2);
    assert.deepEqual(retried.attempts.map((a: any) => [a.attempt, a.tier, a.status, a.outcome]), [[1, 0, 503, 'retry_scheduled'], [2, 1, 503, 'retry_scheduled'], [3, 2, 200, 'delivered']]);
    const at = retried.attempts.map((a: any) => Date.parse(a.at));
    assert.ok(at[1] - at[0] >= 250 && at[2] - at[1] >= 550, `tier delays: ${at.join(', ')}`);

    const dead = byId.get(gone.id)!;
    assert.deepEqual([dead.state, dead.deadLetterReason, dead.nextAttemptAt], ['dead_lettered', 'permanent_status', null]);
    assert.deepEqual(dead.attempts.map((a: any) => [a.attempt, a.status, a.outcome]), [[1, 410, 'dead_lettered']]);
  });

  it('a message kept from its destination by integrations shows that destination as filtered', async () => {
    const { body } = await eventually(() => api(`/v1/messages/${filtered}`), (r) => r.status === 200);
    assert.equal(body.sourceId, quiet.id);
    assert.deepEqual(body.destinations, [{ destinationId: filteredDestination.id, state: 'filtered', tier: null, nextAttemptAt: null, deadLetterReason: null, filterReason: 'integrations', retryPolicy: null, attempts: [] }]);
  });

  it('an unknown message is 404 with the window named; no token is 401', async () => {
    const missing = await api(`/v1/messages/${randomUUID()}`);
    assert.equal(missing.status, 404);
    assert.equal(missing.body.code, 'MESSAGE_NOT_FOUND');
    assert.match(missing.body.message, /last 24 h/);
    const anonymous = await requestJson('GET', `${control.url}/v1/messages/${delivered}`);
    assert.equal(anonymous.status, 401);
    assert.equal((await requestJson('GET', `${control.url}/v1/sources/${main.id}/usage`)).status, 401);
  });

  it('usage per source and day: accepted and rejected by ingest, filtered by integrations in fan-out', async () => {
    const total = (days: Array<{ accepted: number; rejected: number; filtered: number }>) => days.reduce((t, d) => ({ accepted: t.accepted + d.accepted, rejected: t.rejected + d.rejected, filtered: t.filtered + d.filtered }), { accepted: 0, rejected: 0, filtered: 0 });
    const mainUsage = await eventually(() => api(`/v1/sources/${main.id}/usage`), (r) => r.status === 200 && r.body.days.length > 0 && total(r.body.days).rejected === 1);
    assert.equal(mainUsage.body.sourceId, main.id);
    assert.deepEqual(total(mainUsage.body.days), { accepted: 1, rejected: 1, filtered: 0 });
    assert.match(mainUsage.body.days[0].day, /^\d{4}-\d{2}-\d{2}$/);
    const quietUsage = await eventually(() => api(`/v1/sources/${quiet.id}/usage`), (r) => r.status === 200 && r.body.days.length > 0 && total(r.body.days).filtered === 1);
    assert.deepEqual(total(quietUsage.body.days), { accepted: 1, rejected: 0, filtered: 1 });
    assert.deepEqual((await api(`/v1/sources/${idle.id}/usage`)).body, { sourceId: idle.id, days: [] });
    assert.equal((await api('/v1/sources/src_nope/usage')).status, 404);

    // The same counts as Prometheus counters.
    const ingestMetrics = await (await fetch(`${ingest.url}/metrics`)).text();
    assert.match(ingestMetrics, new RegExp(`switchyard_usage_calls_total\\{[^}]*source="${main.id}"[^}]*outcome="accepted"[^}]*\\} 1`));
    assert.match(ingestMetrics, new RegExp(`switchyard_usage_calls_total\\{[^}]*source="${main.id}"[^}]*outcome="rejected"[^}]*\\} 1`));
    const fanoutMetrics = await (await fetch(`${services[2]!.url}/metrics`)).text();
    assert.match(fanoutMetrics, new RegExp(`switchyard_usage_calls_total\\{[^}]*source="${quiet.id}"[^}]*outcome="filtered"[^}]*\\} 1`));
  });
});
