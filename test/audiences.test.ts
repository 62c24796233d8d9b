// Audiences end to end on the real stack: definitions through the admin API, events into the
// ingest topic, identify calls out through fan-out and delivery to a real receiver.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { topicNames } from '@switchyard/platform/kafka/topics';
import { makeDestination, makeSource, writeConfig } from './support/config.js';
import { requestJson } from './support/http.js';
import type { AvroRecordTypes } from '@switchyard/platform/codec/avro-codec';
import { PipelineWriter, event, type EventName } from './support/pipeline-writer.js';
import { startReceiver, type Receiver } from './support/receiver.js';
import { pipelineEnv, setupTopics, startService, type RunningService } from './support/services.js';
import { uniquePrefix } from './support/stack.js';

type Body = { type: string; userId: string | null; traits?: Record<string, unknown> };

describe('audiences: identify calls on membership change', () => {
  const prefix = uniquePrefix('audiences');
  const topics = topicNames(prefix);
  const token = `aud-admin-${randomUUID()}`;
  const source = makeSource();
  let receiver: Receiver;
  let control: RunningService;
  let audiences: RunningService;
  const services: RunningService[] = [];
  let writer: PipelineWriter;
  let env: NodeJS.ProcessEnv;
  const api = (method: string, path: string, body?: unknown) => requestJson(method, `${control.url}${path}`, { token, body });
  /** Identify bodies the receiver got for a user that carry the property. */
  const identifies = (userId: string, property: string) => receiver.requests.map((r) => JSON.parse(r.text) as Body).filter((b) => b.type === 'identify' && b.userId === userId && b.traits && property in b.traits);
  const track = (userId: string, name: string, n = 1) => writer.events(topics.ingest, ...Array.from({ length: n }, () => ['io.switchyard.event.Track', event('io.switchyard.event.Track', { sourceId: source.id, userId, event: name, properties: null, timestamp: Date.now() })] as [EventName, AvroRecordTypes[EventName]]));
  const createAudience = async (name: string, condition: unknown) => {
    const res = await api('POST', '/v1/audiences', { sourceId: source.id, name, condition });
    assert.equal(res.status, 201, res.text);
    return res.body as { id: string; property: string };
  };

  before(async () => {
    receiver = await startReceiver();
    env = pipelineEnv(prefix, { SWITCHYARD_ADMIN_TOKEN: token, SWITCHYARD_ALLOWED_CIDRS: '127.0.0.0/8', AUDIENCES_SYNC_INTERVAL: '500ms' });
    await setupTopics(env);
    await writeConfig(prefix, { sources: [source], destinations: [makeDestination(source.id, { webhooks: [{ url: receiver.url, headers: {}, clientCertificate: null }] })] });
    [control, audiences] = await Promise.all([startService('control', env), startService('audiences', env)]);
    services.push(...await Promise.all([startService('fanout', env), startService('delivery', env)]));
    writer = await new PipelineWriter().start();
  });
  after(async () => {
    await writer?.stop();
    await Promise.all([control?.stop(), audiences?.stop(), ...services.map((s) => s.stop())]);
    await receiver?.close();
  });

  it('Frequent Buyers (≥ 3 Order Completed in 30 days): crossing the threshold sends exactly one identify with true', async () => {
    const audience = await createAudience('Frequent Buyers', { event: 'Order Completed', within: '30d', count: { op: 'gte', value: 3 } });
    assert.equal(audience.property, 'frequent_buyers');
    const buyer = `buyer-${randomUUID()}`;
    await sleep(500);
    await track(buyer, 'Order Completed', 2);
    await sleep(1500);
    assert.equal(identifies(buyer, 'frequent_buyers').length, 0, 'two orders: not a member');
    await track(buyer, 'Order Completed');
    await receiver.waitFor(() => identifies(buyer, 'frequent_buyers').length >= 1);
    await track(buyer, 'Order Completed');
    await sleep(2000);
    const sent = identifies(buyer, 'frequent_buyers');
    assert.equal(sent.length, 1, 'exactly one identify');
    assert.deepEqual(sent[0]!.traits, { frequent_buyers: true });
  });

  it('a time window expiring sends false at the next sync; an unchanged user sends nothing', async () => {
    await createAudience('Recent Buyers', { event: 'Checkout', within: '3s', count: { op: 'gte', value: 1 } });
    const user = `recent-${randomUUID()}`;
    await sleep(500);
    await track(user, 'Checkout');
    await receiver.waitFor(() => identifies(user, 'recent_buyers').length >= 1);
    await receiver.waitFor(() => identifies(user, 'recent_buyers').length >= 2, 15_000);
    assert.deepEqual(identifies(user, 'recent_buyers').map((b) => b.traits!.recent_buyers), [true, false]);
    await sleep(2000);
    assert.equal(identifies(user, 'recent_buyers').length, 2, 'no further identify for an unchanged user');
  });

  it('creating an audience over existing users sends one identify per member and none to non-members', async () => {
    const members = [`m1-${randomUUID()}`, `m2-${randomUUID()}`];
    const other = `x-${randomUUID()}`;
    for (const m of members) await track(m, 'Article Read', 3);
    await track(other, 'Article Read', 1);
    await sleep(1500);
    await createAudience('Avid Readers', { event: 'Article Read', within: '1d', count: { op: 'gte', value: 3 } });
    for (const m of members) await receiver.waitFor(() => identifies(m, 'avid_readers').length >= 1);
    await sleep(1500);
    for (const m of members) assert.deepEqual(identifies(m, 'avid_readers').map((b) => b.traits), [{ avid_readers: true }]);
    assert.equal(identifies(other, 'avid_readers').length, 0);
  });

  it('kill -9 of the audiences service and restart: no member lost, nothing re-sent for unchanged memberships', async () => {
    const before = receiver.requests.filter((r) => JSON.parse(r.text).type === 'identify').length;
    assert.equal(await audiences.stop('SIGKILL'), 'SIGKILL');
    audiences = await startService('audiences', env);
    await sleep(3000);
    const afterRestart = receiver.requests.filter((r) => JSON.parse(r.text).type === 'identify').length;
    assert.equal(afterRestart, before, 'no identify re-sent after the restart');
    // The members are remembered: one more order changes nothing; a new buyer still works.
    const known = receiver.requests.map((r) => JSON.parse(r.text) as Body).find((b) => b.type === 'identify' && b.traits?.frequent_buyers === true)!;
    await track(known.userId!, 'Order Completed');
    const newcomer = `new-${randomUUID()}`;
    await track(newcomer, 'Order Completed', 3);
    await receiver.waitFor(() => identifies(newcomer, 'frequent_buyers').length >= 1);
    await sleep(1000);
    assert.equal(identifies(known.userId!, 'frequent_buyers').length, 1, 'the remembered member got nothing new');
  });

  it('two instances split the partitions and each holds only its partitions\' users; SIGKILL of one hands its users, state and all, to the other', async () => {
    const usersHeld = async (svc: RunningService) => Number(/^audiences_state_users(?:\{[^}]*\})? (\d+)/m.exec(await (await fetch(`${svc.url}/metrics`)).text())?.[1] ?? NaN);
    const alone = await usersHeld(audiences);
    const second = await startService('audiences', env);
    try {
      const buyers = Array.from({ length: 12 }, (_, i) => `split-${i}-${randomUUID()}`);
      await sleep(4000); // the group rebalances over both instances
      for (const b of buyers) await track(b, 'Order Completed', 2);
      let held: number[] = [];
      for (const deadline = Date.now() + 20_000; Date.now() < deadline; await sleep(250)) {
        held = [await usersHeld(audiences), await usersHeld(second)];
        if (held[0]! + held[1]! === alone + buyers.length && held.every((n) => n > 0)) break;
      }
      assert.ok(held.every((n) => n > 0 && n < alone + buyers.length), `users held by the two instances: ${held.join(', ')} of ${alone + buyers.length}`);
      assert.equal(held[0]! + held[1]!, alone + buyers.length, 'each user held once, by the owner of its partition');
      assert.equal(await second.stop('SIGKILL'), 'SIGKILL');
      // The survivor fences the partitions in and restores their users from the changelog.
      for (const deadline = Date.now() + 30_000; (await usersHeld(audiences)) < alone + buyers.length; await sleep(250)) assert.ok(Date.now() < deadline, 'the survivor took the users over');
      for (const b of buyers) assert.equal(identifies(b, 'frequent_buyers').length, 0, 'two orders: not a member yet');
      // The third order counts on the two remembered from the other instance: exactly one identify each.
      for (const b of buyers) await track(b, 'Order Completed');
      await receiver.waitFor(() => buyers.every((b) => identifies(b, 'frequent_buyers').length >= 1), 30_000);
      await sleep(1500);
      assert.deepEqual(buyers.map((b) => identifies(b, 'frequent_buyers').length), buyers.map(() => 1));
    } finally {
      await second.stop('SIGKILL').catch(() => undefined);
    }
  });

  it('validation and listing on the admin API', async () => {
    const bad = await api('POST', '/v1/audiences', { sourceId: source.id, name: 'Broken', condition: { and: [{ trait: 'plan', op: 'eq', value: 'pro' }, { event: 'X', within: '1d', count: { op: 'gte', value: -1 } }] } });
    assert.equal(bad.status, 400);
    assert.equal(bad.body.code, 'INVALID_CONDITION');
    assert.match(bad.body.field, /^condition\.and\[1\]/);
    const dup = await api('POST', '/v1/audiences', { sourceId: source.id, name: 'frequent buyers', condition: { trait: 'plan', op: 'exists' } });
    assert.deepEqual([dup.status, dup.body.code], [400, 'DUPLICATE_PROPERTY']);
    const list = await api('GET', `/v1/audiences?sourceId=${source.id}`);
    assert.ok(list.body.audiences.some((a: { property: string }) => a.property === 'frequent_buyers'));
    const metrics = await (await fetch(`${audiences.url}/metrics`)).text();
    for (const name of ['audiences_state_users', 'audiences_membership_changes_total', 'audiences_sync_seconds', 'audiences_changelog_lag']) assert.match(metrics, new RegExp(`^# TYPE ${name}`, 'm'));
    // Every partition the instance owns has its state restored: its changelog lag shows, at 0.
    const lags = [...metrics.matchAll(/^audiences_changelog_lag\{[^}]*partition="\d+"[^}]*\} (\S+)$/gm)].map((m) => Number(m[1]));
    assert.ok(lags.length > 0 && lags.every((lag) => lag === 0), `changelog lag per owned partition: ${lags.join(', ')}`);
  });
});
