import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Alias, Delete, Group, Identify, Page, Screen, Track } from '@switchyard/platform/schemas/generated';
import { webhookBody, webhookBodyText, type EventRecord } from './webhook-body.js';

const TS = 1700000000123;
const ISO = '2023-11-14T22:13:20.123Z';
const CONTEXT = '{"ip":"203.0.113.7","library":{"name":"analytics-node","version":"6.0.0"}}';
const PARSED_CONTEXT = { ip: '203.0.113.7', library: { name: 'analytics-node', version: '6.0.0' } };

const common = {
  messageId: 'm-1', sourceId: 'src-1', userId: 'u-1' as string | null, anonymousId: null as string | null,
  timestamp: TS, originalTimestamp: TS - 50, sentAt: TS + 10, receivedAt: TS + 60,
  context: CONTEXT as string | null, integrations: null as string | null,
};
const track = (over: Partial<Track> = {}): EventRecord => ({ type: 'track', value: { ...common, event: 'Order Completed', properties: '{"total":12.5,"currency":"EUR"}', ...over } });
const page = (over: Partial<Page> = {}): EventRecord => ({ type: 'page', value: { ...common, name: 'Pricing', category: 'Docs', properties: '{"path":"/pricing","url":"https://example.com/pricing"}', ...over } });
const screen = (over: Partial<Screen> = {}): EventRecord => ({ type: 'screen', value: { ...common, name: 'Home', category: null, properties: '{"tab":"feed"}', ...over } });
const identify = (over: Partial<Identify> = {}): EventRecord => ({ type: 'identify', value: { ...common, traits: '{"email":"ada@example.com","plan":"pro"}', ...over } });
const group = (over: Partial<Group> = {}): EventRecord => ({ type: 'group', value: { ...common, groupId: 'g-1', traits: '{"name":"Acme"}', ...over } });
const alias = (over: Partial<Alias> = {}): EventRecord => ({ type: 'alias', value: { ...common, previousId: 'anon-9', ...over } });
const del = (over: Partial<Delete> = {}): EventRecord => ({ type: 'delete', value: { ...common, requestId: 'req-1', ...over } });

describe('webhookBody: one shape per type, with the document field names', () => {
  it('track', () => {
    assert.deepStrictEqual(webhookBody(track()), {
      version: 1, type: 'track', messageId: 'm-1', userId: 'u-1', event: 'Order Completed',
      properties: { total: 12.5, currency: 'EUR' }, timestamp: ISO, context: PARSED_CONTEXT,
    });
    assert.equal(webhookBodyText(track()),
      '{"version":1,"type":"track","messageId":"m-1","userId":"u-1","event":"Order Completed",' +
      '"properties":{"total":12.5,"currency":"EUR"},"timestamp":"2023-11-14T22:13:20.123Z",' +
      '"context":{"ip":"203.0.113.7","library":{"name":"analytics-node","version":"6.0.0"}}}');
  });

  it('page', () => {
    assert.deepStrictEqual(webhookBody(page()), {
      version: 1, type: 'page', messageId: 'm-1', userId: 'u-1',
      properties: { path: '/pricing', url: 'https://example.com/pricing' }, name: 'Pricing', category: 'Docs',
      timestamp: ISO, context: PARSED_CONTEXT,
    });
  });

  it('screen: the call\'s properties, name and category, like page, and context', () => {
    assert.deepStrictEqual(webhookBody(screen({ category: 'Feed' })), {
      version: 1, type: 'screen', messageId: 'm-1', userId: 'u-1', properties: { tab: 'feed' }, name: 'Home', category: 'Feed',
      timestamp: ISO, context: PARSED_CONTEXT,
    });
    assert.equal(webhookBodyText(screen({ category: 'Feed', context: null })),
      '{"version":1,"type":"screen","messageId":"m-1","userId":"u-1","properties":{"tab":"feed"},"name":"Home","category":"Feed",' +
      '"timestamp":"2023-11-14T22:13:20.123Z","context":{}}');
  });

  it('identify', () => {
    assert.deepStrictEqual(webhookBody(identify()), {
      version: 1, type: 'identify', messageId: 'm-1', userId: 'u-1',
      traits: { email: 'ada@example.com', plan: 'pro' }, timestamp: ISO, context: PARSED_CONTEXT,
    });
  });

  it('group', () => {
    assert.deepStrictEqual(webhookBody(group()), {
      version: 1, type: 'group', messageId: 'm-1', userId: 'u-1', groupId: 'g-1',
      traits: { name: 'Acme' }, timestamp: ISO, context: PARSED_CONTEXT,
    });
  });

  it('alias: "Previous ID" and "User ID", no userId or anonymousId key', () => {
    const record = alias({ anonymousId: 'anon-9', context: null });
    assert.deepStrictEqual(webhookBody(record), {
      version: 1, type: 'alias', messageId: 'm-1', 'Previous ID': 'anon-9', 'User ID': 'u-1', timestamp: ISO,
    });
    assert.equal(webhookBodyText(record),
      '{"version":1,"type":"alias","messageId":"m-1","Previous ID":"anon-9","User ID":"u-1","timestamp":"2023-11-14T22:13:20.123Z"}');
  });

  it('delete: only type, userId, timestamp', () => {
    const record = del({ anonymousId: 'anon-9' });
    assert.deepStrictEqual(webhookBody(record), { type: 'delete', userId: 'u-1', timestamp: ISO });
    assert.equal(webhookBodyText(record), '{"type":"delete","userId":"u-1","timestamp":"2023-11-14T22:13:20.123Z"}');
  });
});

describe('webhookBody: optional and defensive fields', () => {
  it('anonymous page: userId null, anonymousId right after it', () => {
    const body = webhookBody(page({ userId: null, anonymousId: 'anon-1', name: null, category: null, properties: null, context: null }));
    assert.deepStrictEqual(body, { version: 1, type: 'page', messageId: 'm-1', userId: null, anonymousId: 'anon-1', properties: {}, timestamp: ISO });
    assert.deepEqual(Object.keys(body), ['version', 'type', 'messageId', 'userId', 'anonymousId', 'properties', 'timestamp']);
  });

  it('screen without properties, context, name or category: context {}, none of the others', () => {
    assert.deepStrictEqual(webhookBody(screen({ context: null, name: null, properties: null })), {
      version: 1, type: 'screen', messageId: 'm-1', userId: 'u-1', timestamp: ISO, context: {},
    });
  });

  it('screen whose stored properties are not a JSON object: no properties key (only a call\'s own object is shown)', () => {
    for (const bad of ['not json', '[1]', '"text"', 'null']) assert.ok(!('properties' in webhookBody(screen({ properties: bad }))), bad);
    assert.deepStrictEqual(webhookBody(screen({ properties: '{}' })).properties, {});
  });

  it('screen whose context is not an object still shows context {}', () => {
    assert.deepStrictEqual(webhookBody(screen({ context: '[1,2]' })).context, {});
  });

  it('null properties and traits become {}; null context is omitted', () => {
    const t = webhookBody(track({ properties: null, context: null }));
    assert.deepStrictEqual(t.properties, {});
    assert.ok(!('context' in t));
    assert.deepStrictEqual(webhookBody(identify({ traits: null })).traits, {});
    assert.deepStrictEqual(webhookBody(group({ traits: null })).traits, {});
  });

  it('stored text that is not a JSON object: {} for properties/traits, context omitted', () => {
    for (const bad of ['not json', '[1]', '"text"', '42', 'null', '']) {
      const t = webhookBody(track({ properties: bad, context: bad }));
      assert.deepStrictEqual(t.properties, {}, bad);
      assert.ok(!('context' in t), bad);
      assert.deepStrictEqual(webhookBody(identify({ traits: bad })).traits, {}, bad);
    }
  });

  it('alias of an anonymous call keeps "User ID": null', () => {
    const body = webhookBody(alias({ userId: null, anonymousId: 'anon-2' }));
    assert.equal(body['User ID'], null);
    assert.ok(!('userId' in body) && !('anonymousId' in body));
  });

  it('delete without a userId keeps userId: null', () => {
    assert.deepStrictEqual(webhookBody(del({ userId: null })), { type: 'delete', userId: null, timestamp: ISO });
  });

  it('timestamps are ISO 8601 UTC with milliseconds, from the record timestamp', () => {
    assert.equal(webhookBody(track({ timestamp: 1700000000123, originalTimestamp: 1 })).timestamp, '2023-11-14T22:13:20.123Z');
    assert.equal(webhookBody(identify({ timestamp: 1700000000000 })).timestamp, '2023-11-14T22:13:20.000Z');
    assert.equal(webhookBody(del({ timestamp: 0 })).timestamp, '1970-01-01T00:00:00.000Z');
  });
});

describe('webhookBodyText: the bytes that are sent and signed', () => {
  const all: EventRecord[] = [track(), page(), screen({ context: null }), identify(), group(), alias(), del(), page({ userId: null, anonymousId: 'a' })];

  it('is JSON.stringify of the body', () => {
    for (const e of all) assert.equal(webhookBodyText(e), JSON.stringify(webhookBody(e)));
  });

  it('non-ASCII text survives', () => {
    const e = track({ event: 'Commande passée ✓', properties: '{"ville":"Zürich","名前":"東京","emoji":"🚀"}', userId: 'ü-1' });
    const parsed = JSON.parse(webhookBodyText(e)) as Record<string, unknown>;
    assert.equal(parsed.event, 'Commande passée ✓');
    assert.equal(parsed.userId, 'ü-1');
    assert.deepStrictEqual(parsed.properties, { ville: 'Zürich', 名前: '東京', emoji: '🚀' });
    assert.ok(webhookBodyText(e).includes('"名前":"東京"'));
  });

  it('re-stringifying the parsed text gives the same text (what receivers verify against)', () => {
    const tricky = [
      ...all,
      track({ properties: '{"b":1,"2":"two","a":1.0,"n":1e3,"s":"\\u00e9\\n","deep":{"z":[1,{"y":null}]}}' }),
      identify({ traits: '{"name":"Zoë","tags":["a","ß"],"unicode":"\\ud83d\\ude80"}', context: '{"locale":"fr-FR","x":-0}' }),
    ];
    for (const e of tricky) {
      const text = webhookBodyText(e);
      assert.equal(JSON.stringify(JSON.parse(text)), text);
    }
  });
});
