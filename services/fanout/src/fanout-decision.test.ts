import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Decoded } from '@switchyard/platform/codec/avro-codec';
import { ConfigState } from '@switchyard/platform/config-view/config-state';
import type { Track } from '@switchyard/platform/schemas/generated';
import { decideFanout, fanoutTrace } from './fanout-decision.js';

const T = Date.UTC(2026, 10, 22, 10);
const NOW = T + 1000;

function config(): ConfigState {
  const c = new ConfigState();
  const source = (id: string, enabled = true) => c.apply(`source:${id}`, { kind: 'source', value: { id, name: id, enabled, writeKeys: [`wk-${id}`], createdAt: 0, updatedAt: 0 } });
  source('src'); source('quiet'); source('off', false);
  c.apply('destination:dst', { kind: 'destination', value: { id: 'dst', sourceId: 'src', name: 'Webhooks', type: 'webhooks', enabled: true, sharedSecret: null, webhooks: [{ url: 'https://hooks.example.com/in', headers: {}, clientCertificate: null }], createdAt: 0, updatedAt: 0, filter: null, standardSignatures: false, rateLimit: null, signingSecrets: [], retry: null, disabledReason: null, disabledAt: null, notificationTypes: [] } });
  c.apply('destination:off-dst', { kind: 'destination', value: { id: 'off-dst', sourceId: 'off', name: 'Webhooks', type: 'webhooks', enabled: true, sharedSecret: null, webhooks: [{ url: 'https://hooks.example.com/in', headers: {}, clientCertificate: null }], createdAt: 0, updatedAt: 0, filter: null, standardSignatures: false, rateLimit: null, signingSecrets: [], retry: null, disabledReason: null, disabledAt: null, notificationTypes: [] } });
  return c;
}

const track = (over: Partial<Track> = {}): Decoded => ({
  name: 'io.switchyard.event.Track', schemaId: 1,
  value: { messageId: 'm-1', sourceId: 'src', userId: 'u-1', anonymousId: null, event: 'E', properties: null, timestamp: T, originalTimestamp: null, sentAt: null, receivedAt: T, context: null, integrations: null, ...over },
});
const DIRECT = { bytes: 300 };

describe('decideFanout: direct records keep the call rules and count in usage', () => {
  const cfg = config();
  const cases: Array<[string, Decoded, { bytes: number } | undefined, { kind: string; reason?: string; usage?: string }]> = [
    ['a record Switchyard wrote is not checked again and not counted', track({ event: '' }), undefined, { kind: 'tasks' }],
    ['a valid direct record: tasks, accepted', track(), DIRECT, { kind: 'tasks', usage: 'accepted' }],
    ['a direct record breaking a rule: invalid with the reason, rejected', track({ userId: null }), DIRECT, { kind: 'invalid', reason: 'missing_user_id', usage: 'rejected' }],
    ['a direct record over 32 KB: rejected', track(), { bytes: 40_000 }, { kind: 'invalid', reason: 'message_too_large', usage: 'rejected' }],
    ['a direct record of an unknown source: filtered, counted nowhere (like an unknown write key)', track({ sourceId: 'nope', userId: null }), DIRECT, { kind: 'filtered', reason: 'source_unknown' }],
    ['a direct record of a disabled source: filtered, counted nowhere', track({ sourceId: 'off', userId: null }), DIRECT, { kind: 'filtered', reason: 'source_disabled' }],
    ['a valid direct record of a source without destinations: accepted', track({ sourceId: 'quiet' }), DIRECT, { kind: 'filtered', reason: 'no_destination', usage: 'accepted' }],
    ['an invalid direct record of a source without destinations: still rejected', track({ sourceId: 'quiet', event: '' }), DIRECT, { kind: 'invalid', reason: 'missing_event', usage: 'rejected' }],
    ['a valid direct record kept from webhooks by integrations: accepted (and filtered)', track({ integrations: '{"Webhooks":false}' }), DIRECT, { kind: 'filtered', reason: 'integrations', usage: 'accepted' }],
    ['integrations that are not an object text: invalid_field', track({ integrations: '[]' }), DIRECT, { kind: 'invalid', reason: 'invalid_field', usage: 'rejected' }],
  ];
  for (const [name, decoded, direct, expected] of cases) {
    it(name, () => {
      const d = decideFanout(decoded, cfg, NOW, direct);
      assert.equal(d.kind, expected.kind);
      assert.equal('reason' in d ? d.reason : undefined, expected.reason);
      assert.equal(d.usage, expected.usage);
    });
  }

  it('a rejected direct record names its source and message, for invalid-events and usage', () => {
    const d = decideFanout(track({ messageId: 'm-9', userId: '', anonymousId: '' }), cfg, NOW, DIRECT);
    assert.ok(d.kind === 'invalid');
    assert.deepEqual(d.event, { messageId: 'm-9', sourceId: 'src', type: 'track', receivedAt: T });
    assert.equal(d.message, 'userId or anonymousId is required');
  });

  it('a direct delete naming a user gets its task', () => {
    const del: Decoded = { name: 'io.switchyard.event.Delete', schemaId: 2, value: { messageId: 'd-1', sourceId: 'src', userId: 'u-1', anonymousId: null, requestId: null, timestamp: T, originalTimestamp: null, sentAt: null, receivedAt: T, context: null, integrations: null } };
    const d = decideFanout(del, cfg, NOW, DIRECT);
    assert.ok(d.kind === 'tasks' && d.usage === 'accepted');
    assert.equal(d.tasks[0]!.task.body, `{"type":"delete","userId":"u-1","timestamp":"${new Date(T).toISOString()}"}`);
  });

  it('a record of another type is invalid whatever wrote it, and counted nowhere', () => {
    const other = { name: 'io.switchyard.pipeline.DeliveryTask', schemaId: 3, value: {} } as unknown as Decoded;
    for (const direct of [undefined, DIRECT]) {
      const d = decideFanout(other, cfg, NOW, direct);
      assert.deepEqual([d.kind, 'reason' in d && d.reason, d.usage], ['invalid', 'unexpected_type', undefined]);
    }
  });
});

describe('decideFanout: destination filters', () => {
  const dest = (id: string, filter: unknown) => ({
    kind: 'destination' as const,
    value: { id, sourceId: 'f', name: id, type: 'webhooks', enabled: true, sharedSecret: null, webhooks: [{ url: 'https://hooks.example.com/in', headers: {}, clientCertificate: null }], createdAt: 0, updatedAt: 0, filter: filter === null ? null : JSON.stringify(filter), standardSignatures: false, rateLimit: null, signingSecrets: [], retry: null, disabledReason: null, disabledAt: null, notificationTypes: [] },
  });
  function cfg(...destinations: Array<ReturnType<typeof dest>>): ConfigState {
    const c = new ConfigState();
    c.apply('source:f', { kind: 'source', value: { id: 'f', name: 'f', enabled: true, writeKeys: ['wk-f'], createdAt: 0, updatedAt: 0 } });
    for (const d of destinations) c.apply(`destination:${d.value.id}`, d);
    return c;
  }
  const orders = dest('orders', { types: ['track'], events: ['Order *'], where: { property: 'total', op: 'gt', value: 50 } });
  const all = dest('all', null);

  it('a call every filter keeps out: filtered with reason filter, no task, the kept destinations named', () => {
    const d = decideFanout(track({ sourceId: 'f', event: 'Order Completed', properties: '{"total":10}' }), cfg(orders), NOW);
    assert.ok(d.kind === 'filtered');
    assert.deepEqual([d.reason, d.destinationIds], ['filter', ['orders']]);
    assert.equal(fanoutTrace(d, NOW).filterReason, 'filter');
  });

  it('a call one filter keeps out: tasks for the others, and the trace names the filtered one', () => {
    const d = decideFanout(track({ sourceId: 'f', event: 'Signed Up' }), cfg(orders, all), NOW);
    assert.ok(d.kind === 'tasks');
    assert.deepEqual(d.tasks.map((t) => t.task.destinationId), ['all']);
    assert.deepEqual(d.filteredDestinationIds, ['orders']);
    const trace = fanoutTrace(d, NOW);
    assert.deepEqual([trace.destinationIds, trace.filteredDestinationIds, trace.filterReason], [['all'], ['orders'], 'filter']);
  });

  it('a call the filter lets through: a task, nothing filtered, the same body as without a filter', () => {
    const call = track({ sourceId: 'f', event: 'Order Completed', properties: '{"total":99}' });
    const d = decideFanout(call, cfg(orders, all), NOW);
    assert.ok(d.kind === 'tasks');
    assert.deepEqual([d.tasks.length, d.filteredDestinationIds, fanoutTrace(d, NOW).filterReason], [2, [], null]);
    assert.equal(d.tasks[0]!.task.body, d.tasks[1]!.task.body);
  });

  it('integrations come first: a call they keep from webhooks is filtered by integrations, not by filter', () => {
    const d = decideFanout(track({ sourceId: 'f', event: 'Order Completed', integrations: '{"Webhooks":false}' }), cfg(orders), NOW);
    assert.ok(d.kind === 'filtered' && d.reason === 'integrations');
  });

  it('a changed filter applies to the next call (a new record is compiled afresh)', () => {
    const c = cfg(dest('x', { types: ['page'] }));
    assert.equal(decideFanout(track({ sourceId: 'f' }), c, NOW).kind, 'filtered');
    c.apply('destination:x', dest('x', { types: ['track'] }));
    assert.equal(decideFanout(track({ sourceId: 'f' }), c, NOW).kind, 'tasks');
  });
});
