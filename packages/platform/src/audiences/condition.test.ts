import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { counterKey, counterKeys, evaluate, mergeCounterSpecs, parseCondition, parseTime, type Condition } from './condition.js';
import { emptyUserState, type UserState } from './user-state.js';

const DAY = 86_400_000;
const now = Date.parse('2026-11-22T12:00:00.000Z');

function parsed(json: unknown): Condition {
  const result = parseCondition(json);
  assert.ok(result.ok, result.ok ? '' : `${result.path}: ${result.message}`);
  return result.condition;
}

function user(traits: Record<string, unknown>, counters: Record<string, number[]> = {}): UserState {
  return { ...emptyUserState(), traits, counters };
}

describe('parseCondition: refusals name the path', () => {
  const nested = (depth: number): unknown => (depth === 0 ? { trait: 'a', op: 'exists' } : { not: nested(depth - 1) });
  const refused: Array<[string, unknown, string, RegExp]> = [
    ['not an object', 'x', '', /must be an object/],
    ['no kind', { op: 'eq' }, '', /one of trait, event/],
    ['two kinds', { trait: 'a', event: 'b', op: 'exists' }, '', /both trait and event/],
    ['unknown op', { trait: 'plan', op: 'like', value: 'x' }, 'op', /one of eq, neq/],
    ['missing value', { trait: 'plan', op: 'eq' }, 'value', /needs a string, number or boolean/],
    ['object value', { trait: 'plan', op: 'eq', value: { a: 1 } }, 'value', /needs a string/],
    ['value with exists', { trait: 'plan', op: 'exists', value: 1 }, 'value', /not used with exists/],
    ['gt on a non-date string', { trait: 'age', op: 'gt', value: 'old' }, 'value', /number or an ISO 8601 date/],
    ['gt on an impossible date', { trait: 'since', op: 'gt', value: '2024-02-31' }, 'value', /ISO 8601/],
    ['empty dotted segment', { trait: 'address..country', op: 'exists' }, 'trait', /dotted paths/],
    ['unknown field', { trait: 'a', op: 'exists', extra: 1 }, 'extra', /not a field/],
    ['and empty', { and: [] }, 'and', /1 to 20/],
    ['or of 21', { or: Array.from({ length: 21 }, () => ({ trait: 'a', op: 'exists' })) }, 'or', /1 to 20/],
    ['count value not an integer', { and: [{ trait: 'a', op: 'exists' }, { event: 'E', within: '30d', count: { op: 'gte', value: 2.5 } }] }, 'and[1].count.value', /whole number/],
    ['count value negative', { event: 'E', within: '30d', count: { op: 'gte', value: -1 } }, 'count.value', /whole number/],
    ['count value above the cap', { event: 'E', within: '30d', count: { op: 'gte', value: 10_001 } }, 'count.value', /whole number from 0 to 10000/],
    ['count op contains', { event: 'E', within: '30d', count: { op: 'contains', value: 1 } }, 'count.op', /one of gte/],
    ['count missing', { event: 'E', within: '30d' }, 'count', /op, value/],
    ['bad duration', { event: 'E', within: '30 days', count: { op: 'gte', value: 1 } }, 'within', /30d, 12h/],
    ['zero duration', { event: 'E', within: '0d', count: { op: 'gte', value: 1 } }, 'within', /duration/],
    ['window over a year', { event: 'E', within: '366d', count: { op: 'gte', value: 1 } }, 'within', /365d/],
    ['empty event name', { event: '', within: '1d', count: { op: 'gte', value: 1 } }, 'event', /event name/],
    ['bad where op', { or: [{ not: { event: 'E', where: { property: 'p', op: 'in' }, within: '1d', count: { op: 'gte', value: 1 } } }] }, 'or[0].not.where.op', /one of/],
    ['where not an object', { event: 'E', where: 'p', within: '1d', count: { op: 'gte', value: 1 } }, 'where', /property, op/],
    ['nine levels deep', nested(8), 'not.not.not.not.not.not.not.not', /8 levels/],
  ];
  for (const [what, json, path, message] of refused) {
    it(`refuses ${what} at ${path || '(root)'}`, () => {
      const result = parseCondition(json);
      assert.equal(result.ok, false);
      assert.ok(!result.ok);
      assert.equal(result.path, path);
      assert.match(result.message, message);
    });
  }

  it('accepts eight levels, null values with exists, and ISO dates for ordering', () => {
    const eight = parseCondition(nested(7));
    assert.ok(eight.ok);
    assert.ok(parseCondition({ trait: 'a', op: 'not_exists', value: null }).ok);
    assert.deepEqual(parsed({ trait: 'a', op: 'not_exists', value: null }), { trait: 'a', op: 'not_exists' });
    assert.ok(parseCondition({ trait: 'since', op: 'lt', value: '2024-01-01T00:00:00+01:00' }).ok);
  });

  it('refuses more than 200 conditions in all', () => {
    const leaf = { trait: 'a', op: 'exists' };
    const wide = { and: Array.from({ length: 20 }, () => ({ or: Array.from({ length: 10 }, () => leaf) })) };
    const result = parseCondition(wide);
    assert.ok(!result.ok && /at most 200/.test(result.message));
  });
});

describe('evaluate: trait conditions', () => {
  const traits = {
    plan: 'pro', age: 34, ageText: '41', vip: true, nothing: null, tags: ['beta', 'eu'], email: 'ana@example.com',
    signedUpAt: '2024-03-01T10:00:00Z', lastLogin: Date.parse('2026-11-20T00:00:00Z'),
    address: { country: 'FR', city: { name: 'Lyon' } }, 'literal.key': 'yes',
  };
  const cases: Array<[string, unknown, boolean]> = [
    ['eq string', { trait: 'plan', op: 'eq', value: 'pro' }, true],
    ['eq is case-sensitive', { trait: 'plan', op: 'eq', value: 'Pro' }, false],
    ['eq is strict about types', { trait: 'ageText', op: 'eq', value: 41 }, false],
    ['eq boolean', { trait: 'vip', op: 'eq', value: true }, true],
    ['neq', { trait: 'plan', op: 'neq', value: 'free' }, true],
    ['neq is true when absent', { trait: 'missing', op: 'neq', value: 'free' }, true],
    ['exists', { trait: 'plan', op: 'exists' }, true],
    ['null does not exist', { trait: 'nothing', op: 'exists' }, false],
    ['not_exists on absent', { trait: 'missing', op: 'not_exists' }, true],
    ['not_exists on null', { trait: 'nothing', op: 'not_exists' }, true],
    ['gt number', { trait: 'age', op: 'gt', value: 30 }, true],
    ['gte boundary', { trait: 'age', op: 'gte', value: 34 }, true],
    ['lt boundary', { trait: 'age', op: 'lt', value: 34 }, false],
    ['lte', { trait: 'age', op: 'lte', value: 34 }, true],
    ['numeric string compared as a number', { trait: 'ageText', op: 'gt', value: 40 }, true],
    ['non-numeric string never ordered', { trait: 'plan', op: 'gt', value: 1 }, false],
    ['absent never ordered', { trait: 'missing', op: 'lt', value: 1 }, false],
    ['ISO date after', { trait: 'signedUpAt', op: 'gt', value: '2024-01-01' }, true],
    ['ISO date before', { trait: 'signedUpAt', op: 'lt', value: '2024-03-01T09:00:00-02:00' }, true],
    ['epoch ms trait against a date', { trait: 'lastLogin', op: 'gte', value: '2026-11-19' }, true],
    ['a non-date against a date', { trait: 'plan', op: 'gt', value: '2024-01-01' }, false],
    ['contains substring', { trait: 'email', op: 'contains', value: '@example.' }, true],
    ['contains array element', { trait: 'tags', op: 'contains', value: 'eu' }, true],
    ['contains absent element', { trait: 'tags', op: 'contains', value: 'us' }, false],
    ['contains on a number', { trait: 'age', op: 'contains', value: '3' }, false],
    ['dotted path', { trait: 'address.country', op: 'eq', value: 'FR' }, true],
    ['deep dotted path', { trait: 'address.city.name', op: 'eq', value: 'Lyon' }, true],
    ['dotted path through a missing object', { trait: 'company.name', op: 'exists' }, false],
    ['a literal key with a dot wins', { trait: 'literal.key', op: 'eq', value: 'yes' }, true],
    ['inherited properties are not traits', { trait: 'constructor', op: 'exists' }, false],
    ['and: all', { and: [{ trait: 'plan', op: 'eq', value: 'pro' }, { trait: 'vip', op: 'eq', value: true }] }, true],
    ['and: one fails', { and: [{ trait: 'plan', op: 'eq', value: 'pro' }, { trait: 'vip', op: 'eq', value: false }] }, false],
    ['or: one passes', { or: [{ trait: 'plan', op: 'eq', value: 'free' }, { trait: 'age', op: 'gt', value: 18 }] }, true],
    ['or: none pass', { or: [{ trait: 'plan', op: 'eq', value: 'free' }, { trait: 'age', op: 'gt', value: 80 }] }, false],
    ['not', { not: { trait: 'plan', op: 'eq', value: 'free' } }, true],
    ['nested', { and: [{ not: { trait: 'tags', op: 'contains', value: 'us' } }, { or: [{ trait: 'address.country', op: 'eq', value: 'DE' }, { trait: 'address.country', op: 'eq', value: 'FR' }] }] }, true],
  ];
  for (const [what, json, expected] of cases) {
    it(`${what} → ${expected}`, () => assert.equal(evaluate(parsed(json), user(traits), now), expected));
  }
});

describe('evaluate: event conditions', () => {
  const orders = counterKey('Order Completed');
  const bigOrders = counterKey('Order Completed', { property: 'total', op: 'gt', value: 100 });
  const counters = { [orders]: [now - 40 * DAY, now - 20 * DAY, now - 10 * DAY, now - DAY], [bigOrders]: [now - DAY] };
  const cond = (within: string, op: string, value: number, where?: unknown) =>
    parsed({ event: 'Order Completed', ...(where ? { where } : {}), within, count: { op, value } });
  const cases: Array<[string, Condition, boolean]> = [
    ['3 in 30 days, gte 3', cond('30d', 'gte', 3), true],
    ['3 in 30 days, gt 3', cond('30d', 'gt', 3), false],
    ['4 in 60 days, eq 4', cond('60d', 'eq', 4), true],
    ['1 in 2 days, lt 2', cond('2d', 'lt', 2), true],
    ['1 in 48 hours, lte 0', cond('48h', 'lte', 0), false],
    ['none in 60 minutes, eq 0', cond('60m', 'eq', 0), true],
    ['filtered: 1 big order in 30 days', cond('30d', 'eq', 1, { property: 'total', op: 'gt', value: 100 }), true],
    ['an unknown counter counts 0', cond('30d', 'eq', 0, { property: 'total', op: 'lt', value: 5 }), true],
  ];
  for (const [what, condition, expected] of cases) {
    it(`${what} → ${expected}`, () => assert.equal(evaluate(condition, user({}, counters), now), expected));
  }

  it('the window ends now: an event exactly 30 days old is out', () => {
    const c = cond('30d', 'gte', 1);
    assert.equal(evaluate(c, user({}, { [orders]: [now - 30 * DAY] }), now), false);
    assert.equal(evaluate(c, user({}, { [orders]: [now - 30 * DAY + 1] }), now), true);
  });
});

describe('counterKeys: the counters a condition needs', () => {
  it('one per event and filter, with the longest window', () => {
    const c = parsed({
      or: [
        { event: 'Order Completed', within: '7d', count: { op: 'gte', value: 1 } },
        { not: { event: 'Order Completed', within: '30d', count: { op: 'gte', value: 3 } } },
        { event: 'Order Completed', where: { property: 'total', op: 'gt', value: 100 }, within: '12h', count: { op: 'gte', value: 1 } },
        { trait: 'plan', op: 'exists' },
      ],
    });
    assert.deepEqual(counterKeys(c), [
      { key: counterKey('Order Completed'), event: 'Order Completed', windowMs: 30 * DAY },
      { key: counterKey('Order Completed', { property: 'total', op: 'gt', value: 100 }), event: 'Order Completed', where: { property: 'total', op: 'gt', value: 100 }, windowMs: 12 * 3_600_000 },
    ].sort((a, b) => (a.key < b.key ? -1 : 1)));
  });

  it('keys tell filters apart by property, op and value type', () => {
    const keys = new Set([
      counterKey('E'), counterKey('E', { property: 'p', op: 'exists' }), counterKey('E', { property: 'p', op: 'eq', value: 5 }),
      counterKey('E', { property: 'p', op: 'eq', value: '5' }), counterKey('E', { property: 'q', op: 'eq', value: 5 }),
    ]);
    assert.equal(keys.size, 5);
  });

  it('a trait-only condition needs none; merging keeps the longest window per key', () => {
    assert.deepEqual(counterKeys(parsed({ trait: 'a', op: 'exists' })), []);
    assert.deepEqual(mergeCounterSpecs([{ key: 'k', event: 'E', windowMs: 5 }], [{ key: 'k', event: 'E', windowMs: 9 }, { key: 'j', event: 'F', windowMs: 0 }]),
      [{ key: 'j', event: 'F', windowMs: 0 }, { key: 'k', event: 'E', windowMs: 9 }]);
  });
});

describe('parseTime', () => {
  const cases: Array<[unknown, number | undefined]> = [
    ['2024-01-01', Date.UTC(2024, 0, 1)],
    ['2024-01-01T10:00', Date.UTC(2024, 0, 1, 10)],
    ['2024-01-01T10:00:00+0100', Date.UTC(2024, 0, 1, 9)],
    ['2024-01-01 10:00:00.250Z', Date.UTC(2024, 0, 1, 10, 0, 0, 250)],
    [1_700_000_000_000, 1_700_000_000_000],
    ['2024-02-30', undefined],
    ['yesterday', undefined],
    [true, undefined],
  ];
  for (const [input, expected] of cases) it(`${JSON.stringify(input)} → ${expected}`, () => assert.equal(parseTime(input), expected));
});
