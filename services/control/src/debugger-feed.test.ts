// The pure helpers of the debugger page (services/control/debugger/feed.js, plain JavaScript the
// browser loads as is).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { SseParser, hasAttemptSince, insertByReceivedAt, matchesFilter, traceIsFinal, userLabel, type LiveCall } from '../debugger/feed.js';

const call = (overrides: Partial<LiveCall>): LiveCall => ({
  messageId: 'm', type: 'track', name: 'Order Completed', userId: 'user-42', anonymousId: 'anon-7',
  timestamp: '2025-01-01T00:00:00.000Z', receivedAt: '2025-01-01T00:00:00.000Z', call: {}, ...overrides,
});

describe('debugger page: SSE parser', () => {
  it('reads events, joins multi-line data, skips comments, handles CRLF split across chunks', () => {
    const seen: Array<[string, string, string | undefined]> = [];
    const parser = new SseParser((e) => seen.push([e.event, e.data, e.id]));
    parser.push(': hello\r');
    parser.push('\nevent: call\r\nid: 1\r\ndata: a\r');
    parser.push('\ndata: b\r\n\r\ndata: plain\n\n');
    parser.push('event: half');
    assert.deepEqual(seen, [['call', 'a\nb', '1'], ['message', 'plain', undefined]]);
    parser.push('\ndata: x\n\n');
    assert.deepEqual(seen.at(-1), ['half', 'x', undefined]);
  });

  it('an event without data is not dispatched', () => {
    const seen: unknown[] = [];
    const parser = new SseParser((e) => seen.push(e));
    parser.push('event: ping\n\n');
    assert.equal(seen.length, 0);
  });
});

describe('debugger page: filter', () => {
  const none = { type: '', name: '', user: '' };
  const cases: Array<[string, Partial<LiveCall>, Partial<typeof none>, boolean]> = [
    ['no filter passes everything', {}, {}, true],
    ['type is exact', {}, { type: 'track' }, true],
    ['another type fails', {}, { type: 'page' }, false],
    ['name is a case-insensitive substring', {}, { name: 'order comp' }, true],
    ['name that is absent fails', {}, { name: 'signup' }, false],
    ['a call without a name fails a name filter', { type: 'identify', name: null }, { name: 'x' }, false],
    ['user matches the userId', {}, { user: 'USER-4' }, true],
    ['user matches the anonymousId', { userId: null }, { user: 'anon-7' }, true],
    ['user that matches neither fails', {}, { user: 'someone' }, false],
    ['blank filters are ignored', {}, { name: '  ', user: ' ' }, true],
    ['all filters together', { type: 'page', name: 'Home' }, { type: 'page', name: 'home', user: '42' }, true],
  ];
  for (const [what, c, f, expected] of cases) {
    it(what, () => assert.equal(matchesFilter(call(c), { ...none, ...f }), expected));
  }
});

describe('debugger page: list, states, labels', () => {
  const at = (ms: string, id = ms) => ({ id, receivedAt: `2025-01-01T10:00:36.${ms}Z` });
  const ids = (list: Array<{ id: string }>) => list.map((c) => c.id);

  it('keeps the list newest first by receivedAt whatever the arrival order, inserting late arrivals in place', () => {
    // Five calls sent within 35 ms, in the order they arrived across partitions.
    const list: Array<ReturnType<typeof at>> = [];
    const placed = ['879', '874', '865', '883', '851'].map((ms) => insertByReceivedAt(list, at(ms), 10));
    assert.deepEqual(ids(list), ['883', '879', '874', '865', '851']);
    assert.deepEqual(placed, [{ index: 0, removed: [] }, { index: 1, removed: [] }, { index: 2, removed: [] }, { index: 0, removed: [] }, { index: 4, removed: [] }]);
  });

  it('among calls received in the same millisecond, the later arrival goes first', () => {
    const list = [at('500', 'a')];
    insertByReceivedAt(list, at('500', 'b'), 10);
    insertByReceivedAt(list, at('400', 'c'), 10);
    insertByReceivedAt(list, at('500', 'd'), 10);
    assert.deepEqual(ids(list), ['d', 'b', 'a', 'c']);
  });

  it('when full, drops the oldest by receivedAt: a late arrival older than every kept call falls off at once', () => {
    const list = [at('300'), at('200'), at('100')];
    assert.deepEqual(insertByReceivedAt(list, at('250'), 3), { index: 1, removed: [at('100')] });
    assert.deepEqual(ids(list), ['300', '250', '200']);
    assert.deepEqual(insertByReceivedAt(list, at('150'), 3), { index: -1, removed: [at('150')] });
    assert.deepEqual(ids(list), ['300', '250', '200']);
    assert.deepEqual(insertByReceivedAt(list, at('900'), 3), { index: 0, removed: [at('200')] });
    assert.deepEqual(ids(list), ['900', '300', '250']);
  });

  it('a call without a readable receivedAt sorts as the oldest', () => {
    const list = [at('100')];
    insertByReceivedAt(list, { id: 'bad', receivedAt: 'not a time' }, 10);
    insertByReceivedAt(list, at('050'), 10);
    assert.deepEqual(ids(list), ['100', '050', 'bad']);
  });

  it('a trace is final only when every destination is delivered, dead-lettered or filtered', () => {
    assert.equal(traceIsFinal(null), false);
    assert.equal(traceIsFinal({ destinations: [] }), false);
    assert.equal(traceIsFinal({ destinations: [{ state: 'delivered' }, { state: 'dead_lettered' }, { state: 'filtered' }] }), true);
    assert.equal(traceIsFinal({ destinations: [{ state: 'delivered' }, { state: 'retrying' }] }), false);
    assert.equal(traceIsFinal({ destinations: [{ state: 'pending' }] }), false);
  });

  it('the user label prefers the userId, then marks an anonymous id', () => {
    assert.equal(userLabel({ userId: 'u', anonymousId: 'a' }), 'u');
    assert.equal(userLabel({ userId: null, anonymousId: 'a' }), 'anonymous a');
    assert.equal(userLabel({ userId: null, anonymousId: null }), '—');
  });
});

describe('debugger page: waiting for a replay', () => {
  it('an attempt at or after the replay time ends the wait', () => {
    const trace = { destinations: [{ attempts: [{ at: '2025-01-01T00:00:01.000Z' }] }, { attempts: [] }] };
    assert.equal(hasAttemptSince(trace, '2025-01-01T00:00:00.500Z'), true);
    assert.equal(hasAttemptSince(trace, '2025-01-01T00:00:02.000Z'), false);
    assert.equal(hasAttemptSince(null, '2025-01-01T00:00:00.000Z'), false);
  });
});
