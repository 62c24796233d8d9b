import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { callFieldsViolation, MAX_CALL_TIME, MAX_MESSAGE_BYTES, MIN_CALL_TIME, sizeViolation, timeViolation, type CallFields } from './call-rules.js';

describe('call rules: the fields a call needs, shared by ingest and fan-out', () => {
  const u = { userId: 'u', anonymousId: null };
  const cases: Array<[string, CallFields, string | null]> = [
    ['identify with userId', { type: 'identify', ...u }, null],
    ['page with only anonymousId', { type: 'page', userId: null, anonymousId: 'a' }, null],
    ['screen with neither', { type: 'screen', userId: null, anonymousId: null }, 'missing_user_id'],
    ['empty ids are absent', { type: 'identify', userId: '', anonymousId: '' }, 'missing_user_id'],
    ['track with event', { type: 'track', ...u, event: 'E' }, null],
    ['track without event', { type: 'track', ...u, event: null }, 'missing_event'],
    ['track with empty event', { type: 'track', ...u, event: '' }, 'missing_event'],
    ['track without any id reports the id first', { type: 'track', userId: null, anonymousId: null, event: '' }, 'missing_user_id'],
    ['group with groupId', { type: 'group', ...u, groupId: 'g' }, null],
    ['group with empty groupId', { type: 'group', ...u, groupId: '' }, 'missing_group_id'],
    ['alias with both', { type: 'alias', ...u, previousId: 'p' }, null],
    ['alias without previousId (reported before userId)', { type: 'alias', userId: null, anonymousId: null, previousId: '' }, 'missing_previous_id'],
    ['alias with only anonymousId', { type: 'alias', userId: null, anonymousId: 'a', previousId: 'p' }, 'missing_user_id'],
    ['delete with userId', { type: 'delete', ...u }, null],
    ['delete with only anonymousId', { type: 'delete', userId: null, anonymousId: 'a' }, 'missing_user_id'],
  ];
  for (const [name, call, reason] of cases) {
    it(`${name}: ${reason ?? 'kept'}`, () => {
      const got = callFieldsViolation(call);
      assert.equal(got?.reason ?? null, reason);
      if (got) assert.ok(got.message.length > 0);
    });
  }

  it('times within the years 1000–9999 are kept, historical ones included', () => {
    for (const ms of [MIN_CALL_TIME, 0, -1, Date.UTC(1850, 0, 1), Date.now(), MAX_CALL_TIME]) assert.equal(timeViolation('timestamp', ms), null, String(ms));
    for (const ms of [MIN_CALL_TIME - 1, MAX_CALL_TIME + 1, Number.MAX_SAFE_INTEGER, -8.64e15 - 1]) assert.equal(timeViolation('timestamp', ms)?.reason, 'invalid_timestamp', String(ms));
  });

  it('32 KB is allowed, one byte more is not', () => {
    assert.equal(sizeViolation(MAX_MESSAGE_BYTES), null);
    assert.deepEqual(sizeViolation(MAX_MESSAGE_BYTES + 1), { reason: 'message_too_large', message: `the call is ${MAX_MESSAGE_BYTES + 1} bytes; the limit is ${MAX_MESSAGE_BYTES}` });
  });
});
