import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { counterKeys, mergeCounterSpecs, parseCondition, type Condition } from '@switchyard/platform/audiences/condition';
import { computedCounterSpecs, parseComputedTrait, type ComputedTrait } from '@switchyard/platform/audiences/computed-trait';
import { initialSync, membershipChanges, type AudienceDefinition, type TraitDefinition } from './membership.js';
import { snakeCase } from '@switchyard/platform/audiences/snake-case';
import { applyIdentify, applyTrack, emptyUserState, parseUserState, pruneCounters, serializeUserState, type UserState } from '@switchyard/platform/audiences/user-state';

const DAY = 86_400_000;
const t0 = Date.parse('2026-11-01T09:00:00.000Z');

function condition(json: unknown): Condition {
  const result = parseCondition(json);
  assert.ok(result.ok);
  return result.condition;
}
function computed(json: unknown): ComputedTrait {
  const result = parseComputedTrait(json);
  assert.ok(result.ok);
  return result.trait;
}

const frequentBuyers: AudienceDefinition = {
  id: 'aud-1', propertyName: snakeCase('Frequent Buyers'),
  condition: condition({ event: 'Order Completed', within: '30d', count: { op: 'gte', value: 3 } }),
};
const orderCount: TraitDefinition = { id: 'ct-1', name: 'orders_30d', def: computed({ kind: 'event_count', event: 'Order Completed', within: '30d' }) };
const lastOrder: TraitDefinition = { id: 'ct-2', name: 'last_order_at', def: computed({ kind: 'last_seen', event: 'Order Completed' }) };
const plan: TraitDefinition = { id: 'ct-3', name: 'current_plan', def: computed({ kind: 'latest_property', event: 'Plan Changed', property: 'plan' }) };

/** A user's life as the processor sees it: apply a call, decide, keep the next state. */
function run(audiences: AudienceDefinition[], traits: TraitDefinition[]) {
  const specs = mergeCounterSpecs(...audiences.map((a) => counterKeys(a.condition)), ...traits.map((t) => computedCounterSpecs(t.def)));
  let state = emptyUserState();
  const decide = (now: number) => {
    const { traits: emitted, next } = membershipChanges(pruneCounters(state, specs, now), audiences, traits, now);
    state = next;
    return emitted;
  };
  return {
    track: (event: string, now: number, properties: Record<string, unknown> = {}) => {
      state = applyTrack(state, { event, properties, timestamp: now }, specs, now);
      return decide(now);
    },
    identify: (traitsIn: Record<string, unknown>, now: number) => {
      state = applyIdentify(state, traitsIn, now);
      return decide(now);
    },
    sync: decide,
    get state(): UserState { return state; },
    restart: () => { state = parseUserState(serializeUserState(state)); },
  };
}

describe('membershipChanges: Frequent Buyers (3+ Order Completed within 30 days)', () => {
  it('enters on the third purchase, once; exits when the first ages out of the window', () => {
    const user = run([frequentBuyers], []);
    const steps: Array<[string, () => Record<string, unknown>, Record<string, unknown>]> = [
      ['first purchase: not a member, nothing sent', () => user.track('Order Completed', t0), {}],
      ['second purchase: still nothing', () => user.track('Order Completed', t0 + 5 * DAY), {}],
      ['third purchase: enters', () => user.track('Order Completed', t0 + 10 * DAY), { frequent_buyers: true }],
      ['fourth purchase: already a member, nothing', () => user.track('Order Completed', t0 + 12 * DAY), {}],
      ['a sync the next day: nothing', () => user.sync(t0 + 13 * DAY), {}],
      ['30 days after the first: still three inside', () => user.sync(t0 + 30 * DAY), {}],
      ['30 days after the second: two left, exits', () => user.sync(t0 + 35 * DAY), { frequent_buyers: false }],
      ['another sync: already out, nothing', () => user.sync(t0 + 36 * DAY), {}],
      ['one more purchase: three again, enters', () => user.track('Order Completed', t0 + 37 * DAY), { frequent_buyers: true }],
    ];
    for (const [what, step, expected] of steps) assert.deepEqual(step(), expected, what);
    assert.equal(user.state.memberships['aud-1'], true);
  });

  it('exits at the first evaluation after the window passes the first of exactly three', () => {
    const user = run([frequentBuyers], []);
    user.track('Order Completed', t0);
    user.track('Order Completed', t0 + DAY);
    assert.deepEqual(user.track('Order Completed', t0 + 2 * DAY), { frequent_buyers: true });
    assert.deepEqual(user.sync(t0 + 30 * DAY - 1), {});
    assert.deepEqual(user.sync(t0 + 30 * DAY), { frequent_buyers: false });
  });

  it('a restart from the changelog neither forgets nor re-sends', () => {
    const user = run([frequentBuyers], []);
    for (const d of [0, 1, 2]) user.track('Order Completed', t0 + d * DAY);
    user.restart();
    assert.deepEqual(user.sync(t0 + 3 * DAY), {}, 'no second true');
    assert.deepEqual(user.sync(t0 + 31 * DAY), { frequent_buyers: false });
  });

  it('nothing changed → the same state object', () => {
    const state = emptyUserState();
    const result = membershipChanges(state, [frequentBuyers], [orderCount], t0);
    assert.deepEqual(result.traits, {});
    assert.equal(result.next, state);
  });
});

describe('membershipChanges: several audiences, logic and filters', () => {
  const euPro: AudienceDefinition = {
    id: 'aud-2', propertyName: snakeCase('EU Pro (no churn risk)'),
    condition: condition({
      and: [
        { or: [{ trait: 'address.country', op: 'eq', value: 'FR' }, { trait: 'address.country', op: 'eq', value: 'DE' }] },
        { trait: 'plan', op: 'eq', value: 'pro' },
        { not: { trait: 'churnRisk', op: 'gte', value: 0.5 } },
      ],
    }),
  };
  const bigSpenders: AudienceDefinition = {
    id: 'aud-3', propertyName: snakeCase('Big Spenders'),
    condition: condition({ event: 'Order Completed', where: { property: 'total', op: 'gte', value: 100 }, within: '7d', count: { op: 'gte', value: 1 } }),
  };
  const recentSignup: AudienceDefinition = {
    id: 'aud-4', propertyName: snakeCase('Recent Signups'),
    condition: condition({ trait: 'createdAt', op: 'gte', value: '2026-10-01' }),
  };

  it('each audience changes on its own; one identify carries every change', () => {
    const user = run([euPro, bigSpenders, recentSignup], []);
    const steps: Array<[string, () => Record<string, unknown>, Record<string, unknown>]> = [
      ['identify in France on pro, signed up in October', () => user.identify({ plan: 'pro', address: { country: 'FR' }, createdAt: '2026-10-15T08:00:00Z' }, t0), { eu_pro_no_churn_risk: true, recent_signups: true }],
      ['a small order: the filter excludes it', () => user.track('Order Completed', t0 + DAY, { total: 40 }), {}],
      ['a big order: enters big spenders', () => user.track('Order Completed', t0 + 2 * DAY, { total: 250 }), { big_spenders: true }],
      ['churn risk rises: leaves EU pro', () => user.identify({ churnRisk: 0.7 }, t0 + 3 * DAY), { eu_pro_no_churn_risk: false }],
      ['moves to the US with low risk: still out', () => user.identify({ churnRisk: 0.1, address: { country: 'US' } }, t0 + 4 * DAY), {}],
      ['a week after the big order: leaves big spenders', () => user.sync(t0 + 9 * DAY), { big_spenders: false }],
      ['back to Germany: enters EU pro again', () => user.identify({ address: { country: 'DE' } }, t0 + 10 * DAY), { eu_pro_no_churn_risk: true }],
    ];
    for (const [what, step, expected] of steps) assert.deepEqual(step(), expected, what);
  });

  it('a user who never was a member produces nothing, whatever happens', () => {
    const user = run([euPro, bigSpenders], []);
    assert.deepEqual(user.identify({ plan: 'free' }, t0), {});
    assert.deepEqual(user.track('Order Completed', t0, { total: 10 }), {});
    assert.deepEqual(user.sync(t0 + 40 * DAY), {});
    assert.deepEqual(user.state.memberships, {});
  });
});

describe('membershipChanges: computed traits', () => {
  it('a count is sent when it changes, and not when it does not', () => {
    const user = run([], [orderCount]);
    const steps: Array<[string, () => Record<string, unknown>, Record<string, unknown>]> = [
      ['identify with no orders: 0 is not worth a call', () => user.identify({ plan: 'pro' }, t0), {}],
      ['first order', () => user.track('Order Completed', t0 + DAY), { orders_30d: 1 }],
      ['another event: unchanged, nothing', () => user.track('Page Viewed', t0 + DAY), {}],
      ['second order', () => user.track('Order Completed', t0 + 2 * DAY), { orders_30d: 2 }],
      ['a sync, still inside the window', () => user.sync(t0 + 20 * DAY), {}],
      ['the first ages out', () => user.sync(t0 + 31 * DAY), { orders_30d: 1 }],
      ['both out: 0 replaces a sent value', () => user.sync(t0 + 40 * DAY), { orders_30d: 0 }],
      ['still 0: nothing', () => user.sync(t0 + 41 * DAY), {}],
    ];
    for (const [what, step, expected] of steps) assert.deepEqual(step(), expected, what);
  });

  it('last_seen moves with the latest event only', () => {
    const user = run([], [lastOrder]);
    assert.deepEqual(user.identify({ a: 1 }, t0), {}, 'null before any event: nothing');
    assert.deepEqual(user.track('Order Completed', t0 + DAY), { last_order_at: new Date(t0 + DAY).toISOString() });
    assert.deepEqual(user.track('Order Completed', t0 - DAY), {}, 'a late, older event changes nothing');
    assert.deepEqual(user.track('Order Completed', t0 + 2 * DAY), { last_order_at: new Date(t0 + 2 * DAY).toISOString() });
  });

  it('latest_property sends the new value; an event without the property keeps it', () => {
    const user = run([], [plan]);
    assert.deepEqual(user.track('Plan Changed', t0, { plan: 'free' }), { current_plan: 'free' });
    assert.deepEqual(user.track('Plan Changed', t0 + DAY, { plan: 'free' }), {});
    assert.deepEqual(user.track('Plan Changed', t0 + 2 * DAY, { note: 'no plan' }), {});
    assert.deepEqual(user.track('Plan Changed', t0 + 3 * DAY, { plan: 'pro' }), { current_plan: 'pro' });
  });

  it('null is sent only to replace a sent value', () => {
    const state: UserState = { ...emptyUserState(), computed: { 'ct-2': '2026-01-01T00:00:00.000Z' } };
    const cleared = membershipChanges(state, [], [lastOrder], t0);
    assert.deepEqual(cleared.traits, { last_order_at: null });
    assert.deepEqual(membershipChanges(cleared.next, [], [lastOrder], t0).traits, {});
  });

  it('audiences and traits share one identify', () => {
    const user = run([frequentBuyers], [orderCount]);
    user.track('Order Completed', t0);
    user.track('Order Completed', t0 + DAY);
    assert.deepEqual(user.track('Order Completed', t0 + 2 * DAY), { frequent_buyers: true, orders_30d: 3 });
  });
});

describe('initialSync: the creation backfill', () => {
  const withOrders = (count: number) => {
    const specs = counterKeys(frequentBuyers.condition);
    let state = emptyUserState();
    for (let i = 0; i < count; i++) state = applyTrack(state, { event: 'Order Completed', properties: {}, timestamp: t0 + i * DAY }, specs, t0 + i * DAY);
    return state;
  };
  const now = t0 + 5 * DAY;

  it('a member: true is sent and recorded', () => {
    const { emit, next } = initialSync(withOrders(3), frequentBuyers, now);
    assert.equal(emit, true);
    assert.equal(next.memberships['aud-1'], true);
    assert.deepEqual(membershipChanges(next, [frequentBuyers], [], now).traits, {}, 'the next sync does not repeat it');
  });

  it('a non-member: nothing sent, recorded as not a member', () => {
    const { emit, next } = initialSync(withOrders(2), frequentBuyers, now);
    assert.equal(emit, false);
    assert.equal(next.memberships['aud-1'], false);
  });

  it('an audience created after the events is backfilled from the event history', () => {
    let state = emptyUserState();
    for (const d of [0, 1, 2]) state = applyTrack(state, { event: 'Article Read', properties: {}, timestamp: t0 + d * 3_600_000 }, [], t0 + d * 3_600_000);
    const avidReaders: AudienceDefinition = { id: 'aud-9', propertyName: 'avid_readers', condition: condition({ event: 'Article Read', within: '1d', count: { op: 'gte', value: 3 } }) };
    assert.equal(initialSync(state, avidReaders, t0 + 3 * 3_600_000).emit, true);
  });

  it('a user already recorded as a member is not sent again', () => {
    const state = { ...withOrders(3), memberships: { 'aud-1': true } };
    assert.deepEqual(initialSync(state, frequentBuyers, now), { emit: false, next: state });
  });
});
