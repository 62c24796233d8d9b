import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { counterKey, type CounterSpec } from './condition.js';
import { applyIdentify, applyTrack, emptyUserState, HISTORY_CAP, MAX_HISTORY_EVENTS, MAX_TIMESTAMPS, parseUserState, pruneCounters, serializeUserState, type UserState } from './user-state.js';

const DAY = 86_400_000;
const now = Date.parse('2026-11-22T12:00:00.000Z');
const orders: CounterSpec = { key: counterKey('Order Completed'), event: 'Order Completed', windowMs: 30 * DAY };
const bigWhere = { property: 'total', op: 'gt', value: 100 } as const;
const bigOrders: CounterSpec = { key: counterKey('Order Completed', bigWhere), event: 'Order Completed', where: bigWhere, windowMs: 7 * DAY };
const signups: CounterSpec = { key: counterKey('Signed Up'), event: 'Signed Up', windowMs: 0 };
const specs = [orders, bigOrders, signups];

const track = (state: UserState, event: string, timestamp: number, properties: Record<string, unknown> = {}, at = now) =>
  applyTrack(state, { event, properties, timestamp }, specs, at);

describe('applyIdentify', () => {
  it('merges traits shallowly and leaves the input alone', () => {
    const before = applyIdentify(emptyUserState(), { plan: 'free', address: { country: 'FR', city: 'Lyon' } }, now);
    const after = applyIdentify(before, { plan: 'pro', address: { country: 'DE' }, nickname: null }, now);
    assert.deepEqual(after.traits, { plan: 'pro', address: { country: 'DE' }, nickname: null });
    assert.deepEqual(before.traits, { plan: 'free', address: { country: 'FR', city: 'Lyon' } });
  });

  it('no traits → the same state', () => {
    const state = emptyUserState();
    assert.equal(applyIdentify(state, {}, now), state);
  });
});

describe('applyTrack', () => {
  it('records the timestamp in every matching counter, in order, without touching the input', () => {
    const start = emptyUserState();
    const one = track(start, 'Order Completed', now - 2 * DAY, { total: 150 });
    const two = track(one, 'Order Completed', now - 5 * DAY, { total: 20 });
    assert.deepEqual(start.counters, {});
    assert.deepEqual(one.counters, { [orders.key]: [now - 2 * DAY], [bigOrders.key]: [now - 2 * DAY] });
    assert.deepEqual(two.counters, { [orders.key]: [now - 5 * DAY, now - 2 * DAY], [bigOrders.key]: [now - 2 * DAY] });
  });

  it('an event no definition needs yet is kept as history, for audiences created later', () => {
    const state = track(emptyUserState(), 'Page Viewed', now - DAY, { path: '/' });
    assert.deepEqual(state.counters, { [counterKey('Page Viewed')]: [now - DAY] });
    assert.deepEqual(state.lastSeen, { [counterKey('Page Viewed')]: { at: now - DAY, properties: {} } });
  });

  it('history keeps 30 days and HISTORY_CAP timestamps per event', () => {
    let state = track(emptyUserState(), 'Page Viewed', now - 31 * DAY);
    assert.equal(state.counters[counterKey('Page Viewed')], undefined);
    state = { ...state, counters: { [counterKey('Page Viewed')]: Array.from({ length: HISTORY_CAP }, (_, i) => now - DAY + i) } };
    state = track(state, 'Page Viewed', now);
    assert.equal(state.counters[counterKey('Page Viewed')]!.length, HISTORY_CAP);
    assert.equal(state.counters[counterKey('Page Viewed')]!.at(-1), now);
  });

  it('beyond MAX_HISTORY_EVENTS unneeded event names, the least recently seen are forgotten; needed ones never', () => {
    let state = track(emptyUserState(), 'Order Completed', now - 20 * DAY);
    for (let i = 0; i <= MAX_HISTORY_EVENTS; i++) state = track(state, `Event ${i}`, now - 10 * DAY + i);
    assert.equal(state.counters[counterKey('Event 0')], undefined, 'the oldest unneeded one went');
    assert.equal(state.lastSeen[counterKey('Event 0')], undefined);
    assert.ok(state.counters[counterKey(`Event ${MAX_HISTORY_EVENTS}`)]);
    assert.ok(state.counters[orders.key], 'a counter a definition needs stays');
  });

  it('an event older than the window is not counted, but still sets last seen if it is the first', () => {
    const state = track(emptyUserState(), 'Order Completed', now - 31 * DAY);
    assert.deepEqual(state.counters, {});
    assert.deepEqual(state.lastSeen[orders.key], { at: now - 31 * DAY, properties: {} });
  });

  it('drops timestamps that left the window when recording a new one', () => {
    let state = track(emptyUserState(), 'Order Completed', now - 29 * DAY, {}, now);
    state = track(state, 'Order Completed', now + 2 * DAY, {}, now + 2 * DAY);
    assert.deepEqual(state.counters[orders.key], [now + 2 * DAY]);
  });

  it('keeps at most MAX_TIMESTAMPS per counter, the newest', () => {
    const full: UserState = { ...emptyUserState(), counters: { [orders.key]: Array.from({ length: MAX_TIMESTAMPS }, (_, i) => now - DAY + i) } };
    const next = track(full, 'Order Completed', now);
    const list = next.counters[orders.key]!;
    assert.equal(list.length, MAX_TIMESTAMPS);
    assert.equal(list[0], now - DAY + 1);
    assert.equal(list.at(-1), now);
  });

  it('last seen follows the latest timestamp, keeping the filter property; out-of-order events do not win', () => {
    let state = track(emptyUserState(), 'Order Completed', now - DAY, { total: 150, coupon: 'X' });
    state = track(state, 'Order Completed', now - 3 * DAY, { total: 500 });
    assert.deepEqual(state.lastSeen[bigOrders.key], { at: now - DAY, properties: { total: 150 } });
    assert.deepEqual(state.lastSeen[orders.key], { at: now - DAY, properties: {} });
  });

  it('a window of 0 needs the last seen event only (history aside)', () => {
    const seenOnly: CounterSpec = { key: counterKey('Signed Up', { property: 'plan', op: 'exists' }), event: 'Signed Up', where: { property: 'plan', op: 'exists' }, windowMs: 0 };
    const state = applyTrack(emptyUserState(), { event: 'Signed Up', properties: { plan: 'pro' }, timestamp: now - DAY }, [seenOnly], now);
    assert.equal(state.counters[seenOnly.key], undefined);
    assert.deepEqual(state.lastSeen[seenOnly.key], { at: now - DAY, properties: { plan: 'pro' } });
    assert.equal(state.lastSeen[signups.key]?.at, now - DAY);
  });

  it('a key listed twice counts an event once, with the longest window', () => {
    const state = applyTrack(emptyUserState(), { event: 'Order Completed', properties: {}, timestamp: now - 10 * DAY }, [{ ...orders, windowMs: DAY }, orders], now);
    assert.deepEqual(state.counters[orders.key], [now - 10 * DAY]);
  });
});

describe('pruneCounters', () => {
  it('trims counters to their windows and drops filtered counters no spec needs', () => {
    const gone = counterKey('Order Completed', { property: 'coupon', op: 'exists' });
    const history = counterKey('Page Viewed');
    const state: UserState = {
      ...emptyUserState(),
      counters: { [orders.key]: [now - 40 * DAY, now - 31 * DAY, now - DAY], [bigOrders.key]: [now - 8 * DAY], [gone]: [now], [history]: [now - 31 * DAY, now - 2 * DAY] },
      lastSeen: { [orders.key]: { at: now - DAY, properties: {} }, [gone]: { at: now, properties: {} }, [history]: { at: now - 2 * DAY, properties: {} } },
    };
    const pruned = pruneCounters(state, specs, now);
    assert.deepEqual(pruned.counters, { [orders.key]: [now - DAY], [history]: [now - 2 * DAY] });
    assert.deepEqual(Object.keys(pruned.lastSeen).sort(), [orders.key, history].sort());
    assert.equal(state.counters[gone]?.length, 1, 'the input is untouched');
  });

  it('a spec with a longer window than history keeps its own window', () => {
    const yearly: CounterSpec = { ...orders, windowMs: 90 * DAY };
    const state: UserState = { ...emptyUserState(), counters: { [orders.key]: [now - 60 * DAY, now - DAY] } };
    assert.deepEqual(pruneCounters(state, [yearly], now).counters[orders.key], [now - 60 * DAY, now - DAY]);
    assert.deepEqual(pruneCounters(state, [], now).counters[orders.key], [now - DAY], 'history alone: 30 days');
  });

  it('nothing to prune → the same state', () => {
    const state = track(emptyUserState(), 'Order Completed', now - DAY);
    assert.equal(pruneCounters(state, specs, now), state);
  });
});

describe('serializeUserState / parseUserState: the changelog form', () => {
  it('round-trips', () => {
    let state = applyIdentify(emptyUserState(), { plan: 'pro', address: { country: 'FR' } }, now);
    state = track(state, 'Order Completed', now - DAY, { total: 150 });
    state = { ...state, memberships: { a1: true, a2: false }, computed: { t1: 3, t2: '2026-11-21T12:00:00.000Z', t3: null } };
    const text = serializeUserState(state);
    assert.equal(JSON.parse(text).v, 1);
    assert.deepEqual(parseUserState(text), state);
  });

  it('missing fields become empty; empty text or null is a fresh user', () => {
    assert.deepEqual(parseUserState('{"traits":{"plan":"pro"}}'), { ...emptyUserState(), traits: { plan: 'pro' } });
    assert.deepEqual(parseUserState('{}'), emptyUserState());
    assert.deepEqual(parseUserState(''), emptyUserState());
    assert.deepEqual(parseUserState(null), emptyUserState());
  });

  it('malformed entries are dropped and counters re-sorted', () => {
    const text = JSON.stringify({
      traits: [1], counters: { a: [3, 'x', 1, null, 2], b: 'nope', c: [] },
      lastSeen: { a: { at: 5, properties: { p: 1 } }, b: { at: 'late' }, c: { at: 7 } },
      memberships: { m1: true, m2: 'yes' }, computed: 'x',
    });
    assert.deepEqual(parseUserState(text), {
      traits: {}, counters: { a: [1, 2, 3] },
      lastSeen: { a: { at: 5, properties: { p: 1 } }, c: { at: 7, properties: {} } },
      memberships: { m1: true }, computed: {},
    });
  });

  it('text that is not a JSON object throws, for the caller to skip', () => {
    assert.throws(() => parseUserState('{not json'));
    assert.throws(() => parseUserState('[1,2]'), /not a JSON object/);
  });
});
