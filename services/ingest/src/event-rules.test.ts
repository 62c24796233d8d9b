import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { normalizeEvent, type RequestFacts } from './event-rules.js';

const receivedAt = Date.parse('2026-11-22T12:00:00.000Z');
const facts = (over: Partial<RequestFacts> = {}): RequestFacts => ({ sourceId: 'src', receivedAt, newMessageId: () => 'generated', ip: '203.0.113.7', ...over });

describe('normalizeEvent: the rules of a call', () => {
  const refused: Array<[string, unknown, string]> = [
    ['not an object', 42, 'not_an_object'],
    ['an array', [], 'not_an_object'],
    ['unknown type', { type: 'launch', userId: 'u' }, 'unknown_type'],
    ['no type', { userId: 'u' }, 'unknown_type'],
    ['no user', { type: 'track', event: 'E' }, 'missing_user_id'],
    ['empty user ids', { type: 'identify', userId: '', anonymousId: '' }, 'missing_user_id'],
    ['track without event', { type: 'track', userId: 'u' }, 'missing_event'],
    ['track with empty event', { type: 'track', userId: 'u', event: '' }, 'missing_event'],
    ['group without groupId', { type: 'group', userId: 'u' }, 'missing_group_id'],
    ['alias without previousId', { type: 'alias', userId: 'u' }, 'missing_previous_id'],
    ['alias with only anonymousId', { type: 'alias', anonymousId: 'a', previousId: 'p' }, 'missing_user_id'],
    ['userId an object', { type: 'identify', userId: { id: 1 } }, 'invalid_field'],
    ['properties a string', { type: 'track', userId: 'u', event: 'E', properties: 'x' }, 'invalid_field'],
    ['traits an array', { type: 'identify', userId: 'u', traits: [1] }, 'invalid_field'],
    ['event a number', { type: 'track', userId: 'u', event: false }, 'invalid_field'],
    ['bad timestamp', { type: 'track', userId: 'u', event: 'E', timestamp: 'soon' }, 'invalid_timestamp'],
    // Integers past 2^53 lost digits when the JSON was parsed: storing them would change the id.
    ['userId beyond 2^53', { type: 'identify', userId: 2 ** 53 + 2 }, 'invalid_field'],
    ['anonymousId below -2^53', { type: 'identify', anonymousId: -(2 ** 60) }, 'invalid_field'],
    ['messageId 1e21', { type: 'identify', userId: 'u', messageId: 1e21 }, 'invalid_field'],
    ['groupId 2^64', { type: 'group', userId: 'u', groupId: 2 ** 64 }, 'invalid_field'],
    ['event beyond 2^53', { type: 'track', userId: 'u', event: 2 ** 53 }, 'invalid_field'],
    ['over 32 KB', { type: 'track', userId: 'u', event: 'E', properties: { x: 'y'.repeat(32 * 1024) } }, 'message_too_large'],
  ];
  for (const [name, raw, reason] of refused) {
    it(`refuses ${name}: ${reason}`, () => {
      const result = normalizeEvent(raw, undefined, facts());
      assert.equal(result.ok, false);
      assert.equal(!result.ok && result.reason, reason);
    });
  }

  it('keeps a messageId, generates one when absent, reports it when refusing', () => {
    const kept = normalizeEvent({ type: 'identify', userId: 'u', messageId: 'm-1' }, undefined, facts());
    assert.ok(kept.ok && kept.messageId === 'm-1' && kept.record.messageId === 'm-1');
    const generated = normalizeEvent({ type: 'identify', userId: 'u' }, undefined, facts());
    assert.ok(generated.ok && generated.messageId === 'generated');
    const refusedWithId = normalizeEvent({ type: 'track', userId: 'u', messageId: 'm-2' }, undefined, facts());
    assert.ok(!refusedWithId.ok && refusedWithId.messageId === 'm-2');
  });

  it('the path type wins over the body', () => {
    const result = normalizeEvent({ type: 'bogus', userId: 'u', groupId: 'g' }, 'group', facts());
    assert.ok(result.ok && result.schema === 'io.switchyard.event.Group');
  });

  it('merges batch context and integrations (the call wins) and fills context.ip unless given', () => {
    const result = normalizeEvent({ type: 'track', userId: 'u', event: 'E', context: { app: { name: 'a' }, library: { name: 'own' } }, integrations: { Webhooks: false } }, undefined,
      facts({ context: { library: { name: 'batch' }, locale: 'fr' }, integrations: { All: true, Webhooks: true } }));
    assert.ok(result.ok);
    assert.deepEqual(JSON.parse(result.record.context!), { library: { name: 'own' }, locale: 'fr', app: { name: 'a' }, ip: '203.0.113.7' });
    assert.deepEqual(JSON.parse(result.record.integrations!), { All: true, Webhooks: false });
    const withIp = normalizeEvent({ type: 'identify', userId: 'u', context: { ip: '198.51.100.1' } }, undefined, facts());
    assert.ok(withIp.ok && JSON.parse(withIp.record.context!).ip === '198.51.100.1');
    const noIntegrations = normalizeEvent({ type: 'identify', userId: 'u' }, undefined, facts());
    assert.ok(noIntegrations.ok && noIntegrations.record.integrations === null);
  });

  it('timestamp: skew-corrected with sentAt, else the client time, else receivedAt', () => {
    const t = (raw: Record<string, unknown>, sentAt?: string) => {
      const r = normalizeEvent({ type: 'identify', userId: 'u', ...raw }, undefined, facts({ sentAt }));
      assert.ok(r.ok);
      return [r.record.timestamp, r.record.originalTimestamp, r.record.sentAt];
    };
    // Client clock 10 minutes fast; call made 3 s before sending.
    assert.deepEqual(t({ timestamp: '2026-11-22T12:09:57.000Z' }, '2026-11-22T12:10:00.000Z'), [receivedAt - 3000, Date.parse('2026-11-22T12:09:57Z'), Date.parse('2026-11-22T12:10:00Z')]);
    assert.deepEqual(t({ timestamp: '2020-01-01T00:00:00Z' }), [Date.parse('2020-01-01T00:00:00Z'), Date.parse('2020-01-01T00:00:00Z'), null]);
    assert.deepEqual(t({}), [receivedAt, null, null]);
    assert.deepEqual(t({ timestamp: '2026-11-22T11:59:00Z', sentAt: '2026-11-22T11:59:30Z' }), [receivedAt - 30_000, Date.parse('2026-11-22T11:59:00Z'), Date.parse('2026-11-22T11:59:30Z')]);
  });

  it('page and screen keep name, category and properties (fan-out delivers them for both)', () => {
    for (const type of ['page', 'screen'] as const) {
      const r = normalizeEvent({ type, userId: 'u', name: 'Home', category: 'Feed', properties: { tab: 'feed', n: 1 } }, undefined, facts());
      assert.ok(r.ok && (r.schema === 'io.switchyard.event.Page' || r.schema === 'io.switchyard.event.Screen'), type);
      const record = r.record as { name: string | null; category: string | null; properties: string | null };
      assert.deepEqual([record.name, record.category, JSON.parse(record.properties!)], ['Home', 'Feed', { tab: 'feed', n: 1 }], type);
    }
  });

  it('record key is source and user; numbers become strings', () => {
    const r = normalizeEvent({ type: 'alias', userId: 42, previousId: 7 }, undefined, facts());
    assert.ok(r.ok && r.key === 'src:42' && r.schema === 'io.switchyard.event.Alias' && r.record.previousId === '7');
    const anon = normalizeEvent({ type: 'page', anonymousId: 'a-1', name: 'Home' }, undefined, facts());
    assert.ok(anon.ok && anon.key === 'src:a-1');
    const edge = normalizeEvent({ type: 'identify', userId: Number.MAX_SAFE_INTEGER, messageId: 1.5 }, undefined, facts());
    assert.ok(edge.ok && edge.record.userId === '9007199254740991' && edge.messageId === '1.5');
  });
});
