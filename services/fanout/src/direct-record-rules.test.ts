import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Alias, Delete, Group, Identify, Page, Screen, Track } from '@switchyard/platform/schemas/generated';
import { directRecordViolation } from './direct-record-rules.js';
import type { EventRecord } from '@switchyard/platform/tasks/webhook-body';

const T = Date.UTC(2026, 10, 22, 10);
const common = {
  messageId: 'm-1', sourceId: 'src-1', userId: 'u-1' as string | null, anonymousId: null as string | null,
  timestamp: T, originalTimestamp: null as number | null, sentAt: null as number | null, receivedAt: T,
  context: null as string | null, integrations: null as string | null,
};
const track = (over: Partial<Track> = {}): EventRecord => ({ type: 'track', value: { ...common, event: 'E', properties: null, ...over } });
const page = (over: Partial<Page> = {}): EventRecord => ({ type: 'page', value: { ...common, name: null, category: null, properties: null, ...over } });
const screen = (over: Partial<Screen> = {}): EventRecord => ({ type: 'screen', value: { ...common, name: null, category: null, properties: null, ...over } });
const identify = (over: Partial<Identify> = {}): EventRecord => ({ type: 'identify', value: { ...common, traits: null, ...over } });
const group = (over: Partial<Group> = {}): EventRecord => ({ type: 'group', value: { ...common, groupId: 'g', traits: null, ...over } });
const alias = (over: Partial<Alias> = {}): EventRecord => ({ type: 'alias', value: { ...common, previousId: 'p', ...over } });
const del = (over: Partial<Delete> = {}): EventRecord => ({ type: 'delete', value: { ...common, requestId: null, ...over } });

describe('directRecordViolation: the call rules on a record produced straight to the ingest topic', () => {
  const cases: Array<[string, EventRecord, number, string | null]> = [
    ['a valid track', track({ properties: '{"revenue":1}', context: '{"ip":"203.0.113.7"}', integrations: '{"All":true}' }), 200, null],
    ['an anonymous page', page({ userId: null, anonymousId: 'a' }), 200, null],
    ['a screen with properties', screen({ properties: '{"tab":1}', category: 'Feed' }), 200, null],
    ['identify, group, alias, delete with their fields', identify({ traits: '{}' }), 200, null],
    ['group', group(), 200, null],
    ['alias', alias(), 200, null],
    ['delete', del(), 200, null],
    ['a historical timestamp', track({ timestamp: Date.UTC(1999, 0, 1), originalTimestamp: Date.UTC(1999, 0, 1) }), 200, null],
    ['"null" text as an absent field', track({ properties: 'null' }), 200, null],
    ['32 KB exactly', track(), 32 * 1024, null],
    ['over 32 KB', track(), 32 * 1024 + 1, 'message_too_large'],
    ['no userId or anonymousId', identify({ userId: null }), 200, 'missing_user_id'],
    ['empty ids', identify({ userId: '', anonymousId: '' }), 200, 'missing_user_id'],
    ['track with an empty event', track({ event: '' }), 200, 'missing_event'],
    ['group with an empty groupId', group({ groupId: '' }), 200, 'missing_group_id'],
    ['alias with an empty previousId', alias({ previousId: '' }), 200, 'missing_previous_id'],
    ['alias with only anonymousId', alias({ userId: null, anonymousId: 'a' }), 200, 'missing_user_id'],
    ['delete without userId', del({ userId: null, anonymousId: 'a' }), 200, 'missing_user_id'],
    ['a timestamp past the year 9999', track({ timestamp: 8.64e15 }), 200, 'invalid_timestamp'],
    ['a sentAt before the year 1000', track({ sentAt: Date.UTC(999, 0, 1) }), 200, 'invalid_timestamp'],
    ['receivedAt out of range', track({ receivedAt: -9e15 }), 200, 'invalid_timestamp'],
    ['properties not JSON', track({ properties: 'not json' }), 200, 'invalid_field'],
    ['properties an array', page({ properties: '[1]' }), 200, 'invalid_field'],
    ['screen properties a string', screen({ properties: '"x"' }), 200, 'invalid_field'],
    ['traits a number', identify({ traits: '42' }), 200, 'invalid_field'],
    ['context empty text', group({ context: '' }), 200, 'invalid_field'],
    ['integrations not JSON', del({ integrations: '{' }), 200, 'invalid_field'],
  ];
  for (const [name, record, bytes, reason] of cases) {
    it(`${name}: ${reason ?? 'kept'}`, () => {
      const got = directRecordViolation(record, bytes);
      assert.equal(got?.reason ?? null, reason);
      if (got) assert.ok(got.message.length > 0);
    });
  }

  it('the size is checked first, then ids, as ingest does', () => {
    assert.equal(directRecordViolation(track({ userId: null, event: '' }), 40_000)?.reason, 'message_too_large');
    assert.equal(directRecordViolation(track({ userId: null, event: '' }), 100)?.reason, 'missing_user_id');
  });
});
