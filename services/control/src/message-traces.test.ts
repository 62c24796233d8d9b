import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { DeliveryAttempt, FanoutTrace } from '@switchyard/platform/schemas/generated';
import { MessageTraces } from './message-traces.js';

const T0 = Date.UTC(2025, 0, 1, 12);
const fanout = (messageId: string, over: Partial<FanoutTrace> = {}): FanoutTrace => ({
  messageId, sourceId: 'src', eventType: 'track', destinationIds: ['d1'], filteredDestinationIds: [], filterReason: null, receivedAt: T0, fannedOutAt: T0 + 5, ...over,
});
const attempt = (messageId: string, over: Partial<DeliveryAttempt> = {}): DeliveryAttempt => ({
  messageId, taskId: `${messageId}:d1`, sourceId: 'src', destinationId: 'd1', eventType: 'track', urlIndex: 0, attempt: 1, tier: 0, status: 200, error: null,
  latencyMs: 12, outcome: 'delivered', nextTier: null, notBefore: null, deadLetterReason: null, at: T0 + 10, receivedAt: T0, retryPolicy: 'default', retryStep: null, ...over,
});

describe('MessageTraces: the per-message trace from fan-out and attempt records', () => {
  it('fan-out only: the destination is pending; receivedAt, source and type come from the record', () => {
    const t = new MessageTraces({ max: 10, windowMs: 60_000 });
    t.addFanout(fanout('m'), T0);
    assert.deepEqual(t.get('m'), {
      messageId: 'm', sourceId: 'src', type: 'track', receivedAt: new Date(T0).toISOString(),
      destinations: [{ destinationId: 'd1', state: 'pending', tier: null, nextAttemptAt: null, deadLetterReason: null, filterReason: null, retryPolicy: null, attempts: [] }],
    });
  });

  it('503, 503, 200 through two tiers: retrying in tier 1 with its time, then delivered with three attempts in order', () => {
    const t = new MessageTraces({ max: 10, windowMs: 60_000 });
    t.addFanout(fanout('m'), T0);
    t.addAttempt(attempt('m', { status: 503, outcome: 'retry_scheduled', nextTier: 1, notBefore: T0 + 1000 }), T0);
    assert.deepEqual(pick(t.get('m')!.destinations[0]!), ['retrying', 1, new Date(T0 + 1000).toISOString(), null]);
    t.addAttempt(attempt('m', { attempt: 2, tier: 1, status: 503, outcome: 'retry_scheduled', nextTier: 2, notBefore: T0 + 5000, at: T0 + 1000 }), T0);
    // Arrival out of time order (two URLs of one attempt finish in any order) is sorted by time.
    t.addAttempt(attempt('m', { attempt: 3, tier: 2, at: T0 + 5000 }), T0);
    const d = t.get('m')!.destinations[0]!;
    assert.deepEqual(pick(d), ['delivered', 2, null, null]);
    assert.deepEqual(d.attempts.map((a) => [a.attempt, a.tier, a.status, a.outcome]), [[1, 0, 503, 'retry_scheduled'], [2, 1, 503, 'retry_scheduled'], [3, 2, 200, 'delivered']]);
  });

  it('dead-lettered with its reason; filtered destinations; attempts without a fan-out record still show', () => {
    const t = new MessageTraces({ max: 10, windowMs: 60_000 });
    t.addFanout(fanout('m', { destinationIds: [], filteredDestinationIds: ['d2'], filterReason: 'integrations' }), T0);
    t.addAttempt(attempt('m', { status: 410, outcome: 'dead_lettered', deadLetterReason: 'permanent_status' }), T0);
    assert.deepEqual(t.get('m')!.destinations.map((d) => [d.destinationId, ...pick(d)]), [['d1', 'dead_lettered', 0, null, 'permanent_status'], ['d2', 'filtered', null, null, null]]);
    assert.equal(t.get('m')!.destinations[1]!.filterReason, 'integrations');
    t.addAttempt(attempt('other', { eventType: 'page' }), T0);
    assert.deepEqual([t.get('other')!.type, t.get('other')!.receivedAt, t.get('other')!.destinations[0]!.state], ['page', new Date(T0).toISOString(), 'delivered']);
  });

  it('a destination filter keeps a message from one destination while another gets it: the trace says which and why', () => {
    const t = new MessageTraces({ max: 10, windowMs: 60_000 });
    t.addFanout(fanout('m', { destinationIds: ['d1'], filteredDestinationIds: ['d2'], filterReason: 'filter' }), T0);
    assert.deepEqual(t.get('m')!.destinations.map((d) => [d.destinationId, d.state, d.filterReason]), [['d1', 'pending', null], ['d2', 'filtered', 'filter']]);
  });

  it('a deferred range: each message shows the deferred attempt one DeliveryAttempt per task would have', () => {
    const t = new MessageTraces({ max: 10, windowMs: 60_000 });
    t.addFanout(fanout('m'), T0);
    t.addDeferral({ destinationId: 'd1', sourceId: 'src', messageIds: ['m', 'n'], error: 'circuit_open', attempt: 1, at: T0 + 10, nextTier: 1, notBefore: T0 + 10_010, retryPolicy: 'default' }, T0);
    const one = attempt('x', { urlIndex: -1, status: null, error: 'circuit_open', latencyMs: 0, outcome: 'deferred', nextTier: 1, notBefore: T0 + 10_010 });
    t.addAttempt(one, T0);
    assert.deepEqual(t.get('m')!.destinations, t.get('x')!.destinations);
    assert.deepEqual(pick(t.get('n')!.destinations[0]!), ['retrying', 1, new Date(T0 + 10_010).toISOString(), null]);
  });

  it('bounded: at most max messages, the least recently active forgotten first', () => {
    const t = new MessageTraces({ max: 2, windowMs: 60_000 });
    t.addFanout(fanout('a'), T0);
    t.addFanout(fanout('b'), T0 + 1);
    t.addAttempt(attempt('a'), T0 + 2); // a is active again
    t.addFanout(fanout('c'), T0 + 3);
    assert.deepEqual([t.get('a') !== undefined, t.get('b') !== undefined, t.get('c') !== undefined], [true, false, true]);
    assert.equal(t.size, 2);
  });

  it('windowed: messages idle for longer than the window are forgotten', () => {
    const t = new MessageTraces({ max: 10, windowMs: 1000 });
    t.addFanout(fanout('old'), T0);
    t.addFanout(fanout('new'), T0 + 900);
    assert.equal(t.expire(T0 + 1500), 1);
    assert.deepEqual([t.get('old'), t.get('new')?.messageId], [undefined, 'new']);
  });
});

function pick(d: { state: string; tier: number | null; nextAttemptAt: string | null; deadLetterReason: string | null }) {
  return [d.state, d.tier, d.nextAttemptAt, d.deadLetterReason];
}

describe('MessageTraces: the retry policy each attempt followed', () => {
  it('a destination policy shows on the destination and on each attempt, with the tier of the policy that set the wait', () => {
    const t = new MessageTraces({ max: 10, windowMs: 60_000 });
    t.addFanout(fanout('m'), T0);
    t.addAttempt(attempt('m', { status: 500, outcome: 'retry_scheduled', nextTier: 2, notBefore: T0 + 1010, retryPolicy: 'destination', retryStep: 1 }), T0);
    const [d] = t.get('m')!.destinations;
    assert.equal(d!.retryPolicy, 'destination');
    assert.deepEqual(d!.attempts.map((a) => [a.retryPolicy, a.retryStep]), [['destination', 1]]);
  });
});
