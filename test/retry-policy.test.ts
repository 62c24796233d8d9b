// A destination's own retry policy on the real stack: set through the admin API, followed by
// delivery on the deployment's tier topics, named in the message trace, and dead-lettered at its
// own deadline; a destination without one, beside it, retries on the deployment's policy as before.
// Receivers on 127.0.0.1 always answer 500.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { topicNames } from '@switchyard/platform/kafka/topics';
import type { DeadLetter } from '@switchyard/platform/schemas/generated';
import { makeSource, writeConfig } from './support/config.js';
import { requestJson } from './support/http.js';
import { metricTotal } from './support/metrics.js';
import { PipelineWriter, event } from './support/pipeline-writer.js';
import { startReceiver, type Receiver } from './support/receiver.js';
import { pipelineEnv, setupTopics, startService, type RunningService } from './support/services.js';
import { uniquePrefix } from './support/stack.js';
import { TopicReader } from './support/topic-reader.js';

/** The deployment: three tier topics (500 ms, 1 s, 2 s) and a 12 s deadline. */
const DEPLOYMENT = { SWITCHYARD_RETRY_TIERS: '500ms,1s,2s', SWITCHYARD_RETRY_DEADLINE: '12s' };
const OWN_POLICY = { tiers: ['1s', '2s'], deadline: '5s' };

async function eventually<T>(read: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 30_000): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > until) assert.fail(`condition not met within ${timeoutMs} ms; last value: ${JSON.stringify(value)}`);
    await sleep(200);
  }
}

describe('retry policy per destination: tiers and deadline of its own, within the deployment\'s tier topics', () => {
  const prefix = uniquePrefix('retry-policy');
  const topics = topicNames(prefix);
  const token = `retry-admin-${randomUUID()}`;
  const source = makeSource();
  const services: RunningService[] = [];
  const receivers: Receiver[] = [];
  let control: RunningService;
  let delivery: RunningService;
  let writer: PipelineWriter;
  let deadLetters: TopicReader;
  let ownId: string;
  let defaultId: string;
  let ownReceiver: Receiver;
  let defaultReceiver: Receiver;
  let messageId: string;
  const api = (method: string, path: string, body?: unknown) => requestJson(method, `${control.url}${path}`, { token, body });
  const deadLetterOf = (destinationId: string) => deadLetters.waitFor<DeadLetter>(topics.deadLetter, (d) => d.task.destinationId === destinationId, 1, 40_000).then(([d]) => d!);

  before(async () => {
    [ownReceiver, defaultReceiver] = await Promise.all([startReceiver(() => ({ status: 500, body: 'own' })), startReceiver(() => ({ status: 500, body: 'default' }))]);
    receivers.push(ownReceiver, defaultReceiver);
    const env = pipelineEnv(prefix, { SWITCHYARD_ADMIN_TOKEN: token, SWITCHYARD_ALLOWED_CIDRS: '127.0.0.0/8', ...DEPLOYMENT });
    await setupTopics(env);
    await writeConfig(prefix, { sources: [source] });
    control = await startService('control', env);
    services.push(control);
    const own = await api('POST', '/v1/destinations', { sourceId: source.id, type: 'webhooks', name: 'own policy', settings: { webhooks: [{ url: ownReceiver.url }] }, retry: OWN_POLICY });
    assert.equal(own.status, 201, own.text);
    const plain = await api('POST', '/v1/destinations', { sourceId: source.id, type: 'webhooks', name: 'default policy', settings: { webhooks: [{ url: defaultReceiver.url }] } });
    assert.equal(plain.status, 201, plain.text);
    ownId = own.body.id;
    defaultId = plain.body.id;
    const started = await Promise.all([startService('fanout', env), startService('delivery', env)]);
    services.push(...started);
    delivery = started[1];
    writer = await new PipelineWriter().start();
    deadLetters = await new TopicReader([topics.deadLetter]).start();
    const e = event('io.switchyard.event.Track', { sourceId: source.id, event: 'Retry Policy', properties: null });
    messageId = e.messageId;
    await writer.events(topics.ingest, ['io.switchyard.event.Track', e]);
  });
  after(async () => {
    await writer?.stop();
    await deadLetters?.stop();
    await Promise.all(services.map((s) => s.stop()));
    await Promise.all(receivers.map((r) => r.close()));
  });

  it('the API stores the policy and shows it; a destination without one shows null', async () => {
    assert.deepEqual((await api('GET', `/v1/destinations/${ownId}`)).body.retry, OWN_POLICY);
    assert.equal((await api('GET', `/v1/destinations/${defaultId}`)).body.retry, null);
  });

  it('the API refuses a policy outside the limits with a 400 naming the field', async () => {
    const create = (retry: unknown) => api('POST', '/v1/destinations', { sourceId: source.id, type: 'webhooks', settings: { webhooks: [{ url: ownReceiver.url }] }, retry });
    const cases: Array<[unknown, string]> = [
      [{ tiers: ['100ms'], deadline: '5s' }, 'retry.tiers[0]'], // below the shortest tier topic (500 ms)
      [{ tiers: ['1s', '3s'], deadline: '5s' }, 'retry.tiers[1]'], // above the longest (2 s)
      [{ tiers: ['1 s'], deadline: '5s' }, 'retry.tiers[0]'],
      [{ tiers: [], deadline: '5s' }, 'retry.tiers'],
      [{ tiers: ['1s'], deadline: '25h' }, 'retry.deadline'],
      [{ tiers: ['1s'], deadline: '500ms' }, 'retry.deadline'],
    ];
    for (const [retry, field] of cases) {
      const r = await create(retry);
      assert.equal(r.status, 400, `${JSON.stringify(retry)}: ${r.text}`);
      assert.equal(r.body.field, field, r.text);
      assert.equal(r.body.code, 'INVALID_RETRY_POLICY', r.text);
    }
    const missing = await create({ tiers: ['1s'] });
    assert.deepEqual([missing.status, missing.body.field], [400, 'retry.deadline']);
  });

  it('its own policy: retried after 1 s, then 2 s, and dead-lettered (deadline) at 5 s after the first attempt', async () => {
    const dl = await deadLetterOf(ownId);
    assert.deepEqual([dl.reason, dl.status, dl.responseExcerpt], ['deadline', 500, 'own']);
    const requests = ownReceiver.forMessage(messageId);
    assert.equal(dl.task.attempt, requests.length);
    // 0, 1, 3, then a last one cut to the deadline (5 s): 3 when the cluster was slow enough that the third came after 3 s and the fourth past 5 s.
    assert.ok(requests.length >= 3 && requests.length <= 4, `${requests.length} attempts`);
    const gaps = requests.slice(1).map((r, i) => r.at - requests[i]!.at);
    assert.ok(gaps[0]! >= 950, `first wait ${gaps[0]} ms: the policy's 1 s, not the deployment's 500 ms`);
    assert.ok(gaps[1]! >= 1950, `second wait ${gaps[1]} ms: the policy's 2 s`);
    const firstAttemptAt = dl.task.firstAttemptAt!;
    assert.ok(dl.failedAt >= firstAttemptAt + 5000 && dl.failedAt < firstAttemptAt + 8000, `dead-lettered ${dl.failedAt - firstAttemptAt} ms after the first attempt`);
    assert.equal(dl.task.deadline, firstAttemptAt + 5000);
  });

  it('its trace names the destination policy, the tier topics its waits went to and the policy tier that set each wait', async () => {
    const { body } = await eventually(() => api('GET', `/v1/messages/${messageId}`), (r) => r.status === 200 && r.body.destinations.some((d: { destinationId: string; state: string }) => d.destinationId === ownId && d.state === 'dead_lettered'));
    const own = body.destinations.find((d: { destinationId: string }) => d.destinationId === ownId);
    assert.equal(own.retryPolicy, 'destination');
    assert.equal(own.deadLetterReason, 'deadline');
    const attempts = own.attempts as Array<{ attempt: number; tier: number; outcome: string; retryPolicy: string; retryStep: number | null }>;
    assert.ok(attempts.every((a) => a.retryPolicy === 'destination'));
    // Step 1 (1 s) waits in the 1 s topic (tier 2), step 2 (2 s) in the 2 s topic (tier 3).
    assert.deepEqual(attempts.slice(0, 3).map((a) => [a.attempt, a.tier, a.outcome, a.retryStep]), [[1, 0, 'retry_scheduled', 1], [2, 2, 'retry_scheduled', 2], [3, 3, attempts.length === 3 ? 'dead_lettered' : 'retry_scheduled', attempts.length === 3 ? null : 2]]);
    assert.deepEqual([attempts.at(-1)!.outcome, attempts.at(-1)!.retryStep], ['dead_lettered', null]);
  });

  it('the destination beside it, without a policy, retries on the deployment\'s tiers until the deployment\'s 12 s deadline', async () => {
    const dl = await deadLetterOf(defaultId);
    assert.deepEqual([dl.reason, dl.status], ['deadline', 500]);
    const requests = defaultReceiver.forMessage(messageId);
    assert.equal(dl.task.attempt, requests.length);
    const gaps = requests.slice(1).map((r, i) => r.at - requests[i]!.at);
    assert.ok(gaps[0]! >= 450 && gaps[0]! < 950, `first wait ${gaps[0]} ms: the deployment's 500 ms tier`);
    assert.ok(gaps[1]! >= 950, `second wait ${gaps[1]} ms: the deployment's 1 s tier`);
    const firstAttemptAt = dl.task.firstAttemptAt!;
    assert.ok(dl.failedAt >= firstAttemptAt + 12_000 && dl.failedAt < firstAttemptAt + 16_000, `dead-lettered ${dl.failedAt - firstAttemptAt} ms after the first attempt`);

    const { body } = await eventually(() => api('GET', `/v1/messages/${messageId}`), (r) => r.status === 200 && r.body.destinations.some((d: { destinationId: string; state: string }) => d.destinationId === defaultId && d.state === 'dead_lettered'));
    const plain = body.destinations.find((d: { destinationId: string }) => d.destinationId === defaultId);
    assert.equal(plain.retryPolicy, 'default');
    const attempts = plain.attempts as Array<{ attempt: number; tier: number; retryPolicy: string; retryStep: number | null }>;
    assert.ok(attempts.every((a) => a.retryPolicy === 'default'));
    assert.deepEqual(attempts.slice(0, 4).map((a) => [a.attempt, a.tier, a.retryStep]), [[1, 0, 1], [2, 1, 2], [3, 2, 3], [4, 3, 3]]);
  });

  it('delivery counts retries by the policy that chose them', async () => {
    assert.ok(await metricTotal([delivery.url], 'delivery_retries_total', { policy: 'destination' }) >= 2);
    assert.ok(await metricTotal([delivery.url], 'delivery_retries_total', { policy: 'default' }) >= 4);
  });

  it('PATCH with retry null brings back the deployment\'s policy', async () => {
    const r = await api('PATCH', `/v1/destinations/${ownId}`, { retry: null });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.body.retry, null);
  });
});
