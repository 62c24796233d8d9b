import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { counterKey } from './condition.js';
import { computedCounterSpecs, computeTrait, parseComputedTrait, type ComputedTrait } from './computed-trait.js';
import { applyTrack, emptyUserState, type UserState } from './user-state.js';

const DAY = 86_400_000;
const now = Date.parse('2026-11-22T12:00:00.000Z');

function parsed(json: unknown): ComputedTrait {
  const result = parseComputedTrait(json);
  assert.ok(result.ok, result.ok ? '' : `${result.path}: ${result.message}`);
  return result.trait;
}

describe('parseComputedTrait', () => {
  it('accepts the three kinds', () => {
    assert.deepEqual(parsed({ kind: 'event_count', event: 'Order Completed', within: '30d' }), { kind: 'event_count', event: 'Order Completed', within: '30d' });
    assert.deepEqual(parsed({ kind: 'last_seen', event: 'Login', where: { property: 'method', op: 'eq', value: 'sso' } }),
      { kind: 'last_seen', event: 'Login', where: { property: 'method', op: 'eq', value: 'sso' } });
    assert.deepEqual(parsed({ kind: 'latest_property', event: 'Plan Changed', property: 'plan.name' }), { kind: 'latest_property', event: 'Plan Changed', property: 'plan.name' });
  });

  const refused: Array<[string, unknown, string]> = [
    ['not an object', [], ''],
    ['unknown kind', { kind: 'sum', event: 'E' }, 'kind'],
    ['event_count without within', { kind: 'event_count', event: 'E' }, 'within'],
    ['last_seen with within', { kind: 'last_seen', event: 'E', within: '1d' }, 'within'],
    ['latest_property without property', { kind: 'latest_property', event: 'E' }, 'property'],
    ['missing event', { kind: 'last_seen' }, 'event'],
    ['bad filter value', { kind: 'event_count', event: 'E', within: '1d', where: { property: 'p', op: 'lt', value: 'soon' } }, 'where.value'],
  ];
  for (const [what, json, path] of refused) {
    it(`refuses ${what} at ${path || '(root)'}`, () => {
      const result = parseComputedTrait(json);
      assert.ok(!result.ok);
      assert.equal(result.path, path);
    });
  }
});

describe('computeTrait', () => {
  const defs = {
    count: parsed({ kind: 'event_count', event: 'Order Completed', within: '30d' }),
    bigCount: parsed({ kind: 'event_count', event: 'Order Completed', where: { property: 'total', op: 'gte', value: 100 }, within: '7d' }),
    lastOrder: parsed({ kind: 'last_seen', event: 'Order Completed' }),
    lastPlan: parsed({ kind: 'latest_property', event: 'Plan Changed', property: 'plan' }),
    lastAddress: parsed({ kind: 'latest_property', event: 'Moved', property: 'address' }),
  };
  const specs = Object.values(defs).flatMap(computedCounterSpecs);
  const events: Array<[string, number, Record<string, unknown>]> = [
    ['Order Completed', now - 40 * DAY, { total: 500 }],
    ['Order Completed', now - 10 * DAY, { total: 120 }],
    ['Order Completed', now - 3 * DAY, { total: 20 }],
    ['Order Completed', now - 2 * DAY, { total: 100 }],
    ['Plan Changed', now - 5 * DAY, { plan: 'pro' }],
    ['Plan Changed', now - DAY, { reason: 'no plan property' }],
    ['Plan Changed', now - 9 * DAY, { plan: 'free' }],
    ['Moved', now - DAY, { address: { city: 'Lyon' } }],
  ];
  const user = events.reduce<UserState>((s, [event, timestamp, properties]) => applyTrack(s, { event, properties, timestamp }, specs, now), emptyUserState());

  const cases: Array<[string, ComputedTrait, unknown]> = [
    ['event_count counts inside the window', defs.count, 3],
    ['event_count with a filter', defs.bigCount, 1],
    ['last_seen is the ISO time of the latest', defs.lastOrder, new Date(now - 2 * DAY).toISOString()],
    ['latest_property skips events without it and older ones', defs.lastPlan, 'pro'],
    ['latest_property of an object is its JSON text', defs.lastAddress, '{"city":"Lyon"}'],
  ];
  for (const [what, def, expected] of cases) it(`${what}: ${JSON.stringify(expected)}`, () => assert.equal(computeTrait(def, user, now), expected));

  it('a user without the events: 0 and null', () => {
    assert.equal(computeTrait(defs.count, emptyUserState(), now), 0);
    assert.equal(computeTrait(defs.lastOrder, emptyUserState(), now), null);
    assert.equal(computeTrait(defs.lastPlan, emptyUserState(), now), null);
  });

  it('counts fall as time passes, without new events', () => {
    assert.equal(computeTrait(defs.count, user, now + 28 * DAY - 1), 1);
    assert.equal(computeTrait(defs.count, user, now + 28 * DAY), 0);
  });

  it('specs: a counter with its window for counts, last seen only otherwise', () => {
    assert.deepEqual(computedCounterSpecs(defs.count), [{ key: counterKey('Order Completed'), event: 'Order Completed', windowMs: 30 * DAY }]);
    assert.deepEqual(computedCounterSpecs(defs.lastOrder), [{ key: counterKey('Order Completed'), event: 'Order Completed', windowMs: 0 }]);
    const where = { property: 'plan', op: 'exists' } as const;
    assert.deepEqual(computedCounterSpecs(defs.lastPlan), [{ key: counterKey('Plan Changed', where), event: 'Plan Changed', where, windowMs: 0 }]);
  });
});
