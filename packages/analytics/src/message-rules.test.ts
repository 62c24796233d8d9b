import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AnalyticsError, type AnalyticsErrorCode } from './errors.js';
import { buildMessage, MAX_MESSAGE_BYTES } from './message-rules.js';
import type { CallType } from './messages.js';

const NOW = Date.parse('2025-03-04T05:06:07.089Z');
const stamp = { now: NOW, newMessageId: () => 'generated-id' };

function refusal(type: CallType, input: unknown): AnalyticsErrorCode | 'accepted' {
  try {
    buildMessage(type, input, stamp);
    return 'accepted';
  } catch (err) {
    assert.ok(err instanceof AnalyticsError, `expected AnalyticsError, got ${String(err)}`);
    assert.equal(err.retriable, false);
    return err.code;
  }
}

describe('buildMessage', () => {
  it('stamps type, a generated messageId and the current time', () => {
    const { message, json, bytes } = buildMessage('track', { userId: 'u1', event: 'Signed Up', properties: { plan: 'pro' } }, stamp);
    assert.deepEqual(message, { type: 'track', messageId: 'generated-id', timestamp: '2025-03-04T05:06:07.089Z', userId: 'u1', event: 'Signed Up', properties: { plan: 'pro' } });
    assert.equal(json, JSON.stringify(message));
    assert.equal(bytes, Buffer.byteLength(json));
  });

  it('keeps a given messageId, turns a Date timestamp into ISO and sends a string timestamp as given', () => {
    const fromDate = buildMessage('identify', { anonymousId: 'a', messageId: 'm-1', timestamp: new Date('2020-01-02T03:04:05Z') }, stamp).message;
    assert.equal(fromDate.messageId, 'm-1');
    assert.equal(fromDate.timestamp, '2020-01-02T03:04:05.000Z');
    const fromString = buildMessage('identify', { anonymousId: 'a', timestamp: '2020-01-02T03:04:05.123456+0000' }, stamp).message;
    assert.equal(fromString.timestamp, '2020-01-02T03:04:05.123456+0000');
  });

  it('copies only the fields of the call type and leaves out absent ones', () => {
    const input = { userId: 'u', anonymousId: '', name: 'Home', category: 'Docs', properties: { url: '/x' }, traits: { ignored: true }, event: 'ignored', extra: 1, type: 'track' };
    assert.deepEqual(buildMessage('page', input, stamp).message, {
      type: 'page', messageId: 'generated-id', timestamp: '2025-03-04T05:06:07.089Z', userId: 'u', name: 'Home', category: 'Docs', properties: { url: '/x' },
    });
    assert.deepEqual(buildMessage('group', { userId: 'u', groupId: 'g', traits: { size: 3 }, context: { ip: '1.2.3.4' }, integrations: { All: false, Webhooks: true } }, stamp).message, {
      type: 'group', messageId: 'generated-id', timestamp: '2025-03-04T05:06:07.089Z', userId: 'u', groupId: 'g', traits: { size: 3 }, context: { ip: '1.2.3.4' }, integrations: { All: false, Webhooks: true },
    });
    assert.deepEqual(buildMessage('alias', { userId: 'new', previousId: 'old' }, stamp).message, {
      type: 'alias', messageId: 'generated-id', timestamp: '2025-03-04T05:06:07.089Z', userId: 'new', previousId: 'old',
    });
  });

  const requiredFields: [string, CallType, unknown, AnalyticsErrorCode | 'accepted'][] = [
    ['identify without ids', 'identify', { traits: {} }, 'MISSING_USER_ID'],
    ['identify with anonymousId only', 'identify', { anonymousId: 'a' }, 'accepted'],
    ['track without ids', 'track', { event: 'E' }, 'MISSING_USER_ID'],
    ['track without event', 'track', { userId: 'u' }, 'MISSING_EVENT'],
    ['track with an empty event', 'track', { userId: 'u', event: '' }, 'MISSING_EVENT'],
    ['page without ids', 'page', { name: 'Home' }, 'MISSING_USER_ID'],
    ['page with userId only', 'page', { userId: 'u' }, 'accepted'],
    ['screen without ids', 'screen', { name: 'Home' }, 'MISSING_USER_ID'],
    ['group without ids', 'group', { groupId: 'g' }, 'MISSING_USER_ID'],
    ['group without groupId', 'group', { userId: 'u' }, 'MISSING_GROUP_ID'],
    ['alias without userId', 'alias', { previousId: 'p' }, 'MISSING_USER_ID'],
    ['alias with anonymousId instead of userId', 'alias', { anonymousId: 'a', previousId: 'p' }, 'MISSING_USER_ID'],
    ['alias without previousId', 'alias', { userId: 'u' }, 'MISSING_PREVIOUS_ID'],
    ['empty userId and anonymousId', 'identify', { userId: '', anonymousId: '' }, 'MISSING_USER_ID'],
  ];
  for (const [name, type, input, expected] of requiredFields) {
    it(`required fields: ${name} → ${expected}`, () => assert.equal(refusal(type, input), expected));
  }

  const circular: Record<string, unknown> = {};
  circular.self = circular;
  const malformed: [string, CallType, unknown, AnalyticsErrorCode][] = [
    ['no object', 'track', 'Signed Up', 'INVALID_MESSAGE'],
    ['an array', 'identify', [], 'INVALID_MESSAGE'],
    ['a numeric userId', 'identify', { userId: 42 }, 'INVALID_MESSAGE'],
    ['traits as an array', 'identify', { userId: 'u', traits: [1] }, 'INVALID_MESSAGE'],
    ['properties as a string', 'track', { userId: 'u', event: 'E', properties: 'x' }, 'INVALID_MESSAGE'],
    ['a circular property', 'track', { userId: 'u', event: 'E', properties: circular }, 'INVALID_MESSAGE'],
    ['a BigInt property', 'track', { userId: 'u', event: 'E', properties: { n: 1n } }, 'INVALID_MESSAGE'],
    ['an unparseable timestamp', 'track', { userId: 'u', event: 'E', timestamp: 'yesterday' }, 'INVALID_TIMESTAMP'],
    ['an invalid Date', 'track', { userId: 'u', event: 'E', timestamp: new Date(Number.NaN) }, 'INVALID_TIMESTAMP'],
    ['a numeric timestamp', 'track', { userId: 'u', event: 'E', timestamp: 1700000000000 }, 'INVALID_TIMESTAMP'],
  ];
  for (const [name, type, input, expected] of malformed) {
    it(`refuses ${name} with ${expected}`, () => assert.equal(refusal(type, input), expected));
  }

  it('accepts a message of exactly 32 KB as JSON and refuses one byte more', () => {
    const base = buildMessage('track', { userId: 'u', event: 'E', properties: { pad: '' } }, stamp).bytes;
    const exact = buildMessage('track', { userId: 'u', event: 'E', properties: { pad: 'x'.repeat(MAX_MESSAGE_BYTES - base) } }, stamp);
    assert.equal(exact.bytes, MAX_MESSAGE_BYTES);
    assert.equal(refusal('track', { userId: 'u', event: 'E', properties: { pad: 'x'.repeat(MAX_MESSAGE_BYTES - base + 1) } }), 'MESSAGE_TOO_LARGE');
  });

  it('measures the size in UTF-8 bytes, not characters', () => {
    const base = buildMessage('track', { userId: 'u', event: 'E', properties: { pad: '' } }, stamp).bytes;
    const chars = Math.ceil((MAX_MESSAGE_BYTES - base) / 3) + 1; // '€' is 3 bytes
    assert.ok(chars < MAX_MESSAGE_BYTES);
    assert.equal(refusal('track', { userId: 'u', event: 'E', properties: { pad: '€'.repeat(chars) } }), 'MESSAGE_TOO_LARGE');
  });
});
