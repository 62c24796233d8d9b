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

  it('keeps a given messageId', () => {
    assert.equal(buildMessage('identify', { anonymousId: 'a', messageId: 'm-1' }, stamp).message.messageId, 'm-1');
  });

  // Ingest reads ISO 8601 only (services/ingest/src/timestamps.ts); anything else the client sent
  // as given ended in invalid-events. Every accepted timestamp is sent as toISOString() gives it.
  const timestamp = (value: unknown) => buildMessage('track', { userId: 'u', event: 'E', timestamp: value }, stamp).message.timestamp;
  const normalised: [string, unknown, string][] = [
    ['a Date', new Date('2020-01-02T03:04:05Z'), '2020-01-02T03:04:05.000Z'],
    ['a Date with milliseconds', new Date(Date.UTC(2020, 0, 2, 3, 4, 5, 678)), '2020-01-02T03:04:05.678Z'],
    // ISO strings: the instant the server reads from them (its cases), so the meaning is unchanged.
    ['ISO with Z and milliseconds', '2026-11-22T10:00:00.123Z', '2026-11-22T10:00:00.123Z'],
    ['ISO with Z, no fraction', '2026-11-22T10:00:00Z', '2026-11-22T10:00:00.000Z'],
    ['a +0000 offset (Go client)', '2016-04-26T18:14:48+0000', '2016-04-26T18:14:48.000Z'],
    ['a +0200 offset', '2016-04-26T20:14:48+0200', '2016-04-26T18:14:48.000Z'],
    ['a -05:00 offset', '2016-04-26T13:14:48-05:00', '2016-04-26T18:14:48.000Z'],
    ['a -0530 offset', '2016-04-26T18:14:48-0530', '2016-04-26T23:44:48.000Z'],
    ['a +00 offset', '1999-12-31T23:59:59.999+00', '1999-12-31T23:59:59.999Z'],
    ['nanoseconds, truncated as the server does', '2026-11-22T10:00:00.123456789Z', '2026-11-22T10:00:00.123Z'],
    ['microseconds with +0000', '2020-01-02T03:04:05.999999+0000', '2020-01-02T03:04:05.999Z'],
    ['one fraction digit', '2026-11-22T10:00:00.1Z', '2026-11-22T10:00:00.100Z'],
    ['a space instead of T', '2026-11-22 10:00:00Z', '2026-11-22T10:00:00.000Z'],
    ['no seconds and no zone (UTC, as the server reads it)', '2026-11-22T10:00', '2026-11-22T10:00:00.000Z'],
    ['a date alone (midnight UTC)', '2026-11-22', '2026-11-22T00:00:00.000Z'],
    ['the first year the server accepts', '1000-01-01T00:00:00Z', '1000-01-01T00:00:00.000Z'],
    // Other strings Date.parse reads: converted as new Date(x) reads them.
    ['an RFC 7231 date (toUTCString)', 'Thu, 07 Mar 2024 10:00:00 GMT', '2024-03-07T10:00:00.000Z'],
    ['a month name with a UTC zone', 'March 7, 2024 10:00 UTC', '2024-03-07T10:00:00.000Z'],
    ['a month name in local time', 'March 7, 2024', new Date('March 7, 2024').toISOString()],
    ['Date.prototype.toString()', new Date(Date.UTC(2024, 2, 7, 10)).toString(), '2024-03-07T10:00:00.000Z'],
  ];
  for (const [name, input, expected] of normalised) {
    it(`timestamp: ${name} → ${expected}`, () => assert.equal(timestamp(input), expected));
  }

  const refused: [string, unknown][] = [
    ['a word', 'yesterday'],
    ['an invalid Date', new Date(Number.NaN)],
    ['a number (epoch milliseconds)', 1700000000000],
    ['a Date before the year 1000', new Date(Date.UTC(999, 11, 31))],
    ['a Date after the year 9999', new Date(Date.UTC(10000, 0, 1))],
    // ISO-shaped strings the server refuses are refused here, not repaired by Date.parse.
    ['31 February (Date.parse rolls it into March)', '2026-02-31T00:00:00Z'],
    ['hour 25', '2026-11-22T25:00:00Z'],
    ['month 13', '2026-13-01'],
    ['an offset over 18 hours', '2026-11-22T10:00:00+1900'],
    ['a year before 1000', '0999-01-01'],
    ['a year of five digits', '10000-01-01'],
    ['a month name in a year before 1000', 'March 7, 0999'],
    // Digits in another order are ambiguous (03/07 is March or July) or not a time at all
    // (Date.parse reads '12' as 1 December 2001).
    ['a slashed date', '03/07/2024'],
    ['a bare number', '12'],
    ['a BigInt', 1n],
  ];
  for (const [name, input] of refused) {
    it(`timestamp: refuses ${name} with INVALID_TIMESTAMP`, () => assert.equal(refusal('track', { userId: 'u', event: 'E', timestamp: input }), 'INVALID_TIMESTAMP'));
  }

  it('an INVALID_TIMESTAMP names the field and the value', () => {
    assert.throws(() => timestamp('March 7th'), (err: AnalyticsError) => err.code === 'INVALID_TIMESTAMP' && err.field === 'timestamp' && err.message.includes('"March 7th"'));
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
