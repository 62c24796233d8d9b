// Event filters per destination on the real stack: a filter from the seed file and ones set through
// the admin API, validated with the path of the error; calls go in through the ingest API and each
// receiver gets exactly the calls its destination's filter lets through (types, wildcards,
// conditions over properties and context); a filtered call shows in the trace and in usage; a
// changed filter applies to the next calls without a restart.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { requestJson } from './support/http.js';
import { startReceiver, type Receiver } from './support/receiver.js';
import { newSecret } from './support/secrets.js';
import { pipelineEnv, setupTopics, startService, type RunningService } from './support/services.js';
import { uniquePrefix } from './support/stack.js';

async function eventually<T>(read: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) assert.fail(`condition not met within ${timeoutMs} ms; last value: ${JSON.stringify(value)}`);
    await sleep(200);
  }
}

const SEEDED_FILTER = { types: ['track', 'identify'], events: ['Order *', 'Signed Up'] };
const RICH_FILTER = { types: ['track', 'page'], where: { or: [{ property: 'total', op: 'gt', value: 50 }, { context: 'library.name', op: 'eq', value: 'analytics-go' }] } };

describe('destination filters: admin API, seed file, fan-out, trace and usage', () => {
  const prefix = uniquePrefix('filters');
  const token = newSecret('filters admin token', 'filters-admin-');
  const writeKey = newSecret('filters write key', 'wk-');
  const seedPath = join(tmpdir(), `seed-filters-${randomUUID()}.yaml`);
  const services: RunningService[] = [];
  let control: RunningService;
  let ingest: RunningService;
  let seeded: Receiver;
  let rich: Receiver;
  let all: Receiver;
  let richId: string;
  let allId: string;
  const api = (method: string, path: string, body?: unknown) => requestJson(method, `${control.url}${path}`, { token, body });
  const send = async (batch: unknown[]) => {
    const res = await requestJson('POST', `${ingest.url}/v1/batch`, { body: { batch }, headers: { authorization: `Basic ${Buffer.from(`${writeKey}:`).toString('base64')}` } });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.rejected, undefined, res.text);
  };
  const ids = (r: Receiver) => r.requests.map((q) => JSON.parse(q.text).messageId as string).sort();

  before(async () => {
    [seeded, rich, all] = await Promise.all([startReceiver(), startReceiver(), startReceiver()]);
    writeFileSync(seedPath, [
      'sources:',
      '  - id: flt',
      '    name: Filtered source',
      '    writeKeys: ["${FLT_WRITE_KEY}"]',
      'destinations:',
      '  - id: flt-seeded',
      '    sourceId: flt',
      '    settings:',
      '      webhooks:',
      `        - url: ${seeded.url}`,
      '    filter:',
      '      types: [track, identify]',
      '      events: ["Order *", "Signed Up"]',
      '',
    ].join('\n'));
    const env = pipelineEnv(prefix, {
      SWITCHYARD_ADMIN_TOKEN: token, SWITCHYARD_ALLOWED_CIDRS: '127.0.0.0/8', SWITCHYARD_SEED_FILE: seedPath, FLT_WRITE_KEY: writeKey,
      SWITCHYARD_USAGE_INTERVAL: '300ms',
    });
    await setupTopics(env);
    [control, ingest] = await Promise.all([startService('control', env), startService('ingest', env)]);
    services.push(control, ingest, ...(await Promise.all([startService('fanout', env), startService('delivery', env)])));
  });
  after(async () => {
    await Promise.all(services.map((s) => s.stop()));
    await Promise.all([seeded, rich, all].map((r) => r?.close()));
  });

  it('the seed file sets a filter; the API shows it', async () => {
    const { body } = await api('GET', '/v1/destinations/flt-seeded');
    assert.deepEqual(body.filter, SEEDED_FILTER);
  });

  it('a bad filter is refused on create and update with INVALID_FILTER and the path inside it', async () => {
    const base = { sourceId: 'flt', type: 'webhooks', settings: { webhooks: [{ url: all.url }] } };
    const cases: Array<[unknown, string]> = [
      [{ types: ['track', 'purchase'] }, 'filter.types[1]'],
      [{ events: [''] }, 'filter.events[0]'],
      [{ where: { and: [{ context: 'library.name', op: 'exists' }, { property: 'total', op: 'gt', value: 'many' }] } }, 'filter.where.and[1].value'],
      [{ type: ['track'] }, 'filter.type'],
      ['track', 'filter'],
    ];
    for (const [filter, field] of cases) {
      const res = await api('POST', '/v1/destinations', { ...base, filter });
      assert.equal(res.status, 400, res.text);
      assert.deepEqual([res.body.code, res.body.field], ['INVALID_FILTER', field], res.text);
    }
    const patched = await api('PATCH', '/v1/destinations/flt-seeded', { filter: { where: { property: 'total', op: 'near', value: 1 } } });
    assert.deepEqual([patched.status, patched.body.code, patched.body.field], [400, 'INVALID_FILTER', 'filter.where.op']);
  });

  it('each destination gets exactly the calls its filter lets through: types, exact and wildcard names, property and context conditions', async () => {
    const created = await api('POST', '/v1/destinations', { sourceId: 'flt', name: 'Rich', type: 'webhooks', settings: { webhooks: [{ url: rich.url }] }, filter: RICH_FILTER });
    assert.equal(created.status, 201, created.text);
    assert.deepEqual(created.body.filter, RICH_FILTER);
    richId = created.body.id;
    const plain = await api('POST', '/v1/destinations', { sourceId: 'flt', name: 'All', type: 'webhooks', settings: { webhooks: [{ url: all.url }] } });
    assert.equal(plain.body.filter, null);
    allId = plain.body.id;
    await sleep(500); // fan-out's view of the new destinations

    const m = (name: string) => `flt-${name}-${randomUUID()}`;
    const calls = {
      bigOrder: { type: 'track', messageId: m('big-order'), userId: 'u1', event: 'Order Completed', properties: { total: 99 } },
      smallOrder: { type: 'track', messageId: m('small-order'), userId: 'u1', event: 'Order Refunded', properties: { total: 10 } },
      signedUp: { type: 'track', messageId: m('signed-up'), userId: 'u2', event: 'Signed Up' },
      notExact: { type: 'track', messageId: m('not-exact'), userId: 'u2', event: 'Signed Up Twice' },
      goLibrary: { type: 'track', messageId: m('go'), userId: 'u3', event: 'Cart Viewed', context: { library: { name: 'analytics-go' } } },
      identify: { type: 'identify', messageId: m('identify'), userId: 'u3', traits: { plan: 'pro' } },
      page: { type: 'page', messageId: m('page'), userId: 'u4', name: 'Checkout', properties: { total: 60 } },
      group: { type: 'group', messageId: m('group'), userId: 'u4', groupId: 'g1' },
    };
    await send(Object.values(calls));
    const every = Object.values(calls).map((c) => c.messageId).sort();
    await all.waitFor((r) => r.length >= every.length);
    const expectSeeded = [calls.bigOrder, calls.smallOrder, calls.signedUp, calls.identify].map((c) => c.messageId).sort();
    const expectRich = [calls.bigOrder, calls.goLibrary, calls.page].map((c) => c.messageId).sort();
    await seeded.waitFor((r) => r.length >= expectSeeded.length);
    await rich.waitFor((r) => r.length >= expectRich.length);
    await sleep(1000); // anything extra would have arrived by now
    assert.deepEqual(ids(all), every, 'no filter: every call (the default)');
    assert.deepEqual(ids(seeded), expectSeeded);
    assert.deepEqual(ids(rich), expectRich);

    // The trace of a call the rich filter kept out shows it, per destination.
    const trace = await eventually(() => api('GET', `/v1/messages/${calls.signedUp.messageId}`), (r) => r.status === 200 && r.body.destinations.length === 3 && r.body.destinations.every((d: { state: string }) => d.state !== 'pending'));
    const byId = Object.fromEntries((trace.body.destinations as Array<{ destinationId: string; state: string; filterReason: string | null }>).map((d) => [d.destinationId, [d.state, d.filterReason]]));
    assert.deepEqual(byId, { 'flt-seeded': ['delivered', null], [richId]: ['filtered', 'filter'], [allId]: ['delivered', null] });

    // Usage: every call some filter kept from a destination counts once as filtered, reason filter.
    const usage = await eventually(() => api('GET', '/v1/sources/flt/usage'), (r) => r.status === 200 && r.body.days[0]?.filteredBy?.filter === 7);
    assert.deepEqual([usage.body.days[0].accepted, usage.body.days[0].filtered, usage.body.days[0].filteredBy], [8, 7, { integrations: 0, filter: 7 }]);
  });

  it('a changed filter applies to the calls fanned out after the change, without a restart; null removes it', async () => {
    const patched = await api('PATCH', `/v1/destinations/${richId}`, { filter: { types: ['group'] } });
    assert.equal(patched.status, 200, patched.text);
    await sleep(500);
    const group = `flt-group2-${randomUUID()}`;
    const track = `flt-track2-${randomUUID()}`;
    await send([{ type: 'group', messageId: group, userId: 'u5', groupId: 'g2' }, { type: 'track', messageId: track, userId: 'u5', event: 'Order Completed', properties: { total: 500 } }]);
    await all.waitFor((r) => r.some((q) => q.text.includes(track)) && r.some((q) => q.text.includes(group)));
    await rich.waitFor((r) => r.some((q) => q.text.includes(group)));
    await sleep(1000);
    assert.equal(rich.forMessage(track).length, 0, 'the old filter no longer lets the big order through');

    const removed = await api('PATCH', `/v1/destinations/${richId}`, { filter: null });
    assert.equal(removed.body.filter, null);
    await sleep(500);
    const page = `flt-page2-${randomUUID()}`;
    await send([{ type: 'page', messageId: page, userId: 'u6', name: 'Home' }]);
    await rich.waitFor((r) => r.some((q) => q.text.includes(page)));
  });
});
