import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { CallFields } from '../audiences/condition.js';
import { compileFilter, eventMatcher, filterOf, parseDestinationFilter, type CallType, type DestinationFilter } from './destination-filter.js';

function compiled(json: unknown) {
  const parsed = parseDestinationFilter(json);
  assert.ok(parsed.ok, parsed.ok ? '' : `${parsed.path}: ${parsed.message}`);
  return compileFilter(parsed.filter);
}

const NO_FIELDS: CallFields = { properties: {}, traits: {}, context: {} };
const fields = (over: Partial<CallFields>) => () => ({ ...NO_FIELDS, ...over });

describe('parseDestinationFilter: refusals name the path inside the filter', () => {
  const refused: Array<[string, unknown, string, RegExp]> = [
    ['not an object', ['track'], '', /must be an object/],
    ['an unknown key', { type: ['track'] }, 'type', /not a field here/],
    ['types empty', { types: [] }, 'types', /list of 1 to 7/],
    ['an unknown type', { types: ['track', 'purchase'] }, 'types[1]', /one of track, page/],
    ['a type listed twice', { types: ['track', 'track'] }, 'types[1]', /twice/],
    ['events not a list', { events: 'Order *' }, 'events', /list of 1 to 100/],
    ['an empty event name', { events: ['A', ''] }, 'events[1]', /event name/],
    ['where with an unknown op', { where: { property: 'total', op: 'above', value: 1 } }, 'where.op', /one of eq/],
    ['where nested badly', { where: { and: [{ context: 'library.name', op: 'exists' }, { property: 'total', op: 'gt', value: 'lots' }] } }, 'where.and[1].value', /number or an ISO 8601 date/],
    ['where with an event count (audiences only)', { where: { event: 'E', within: '1d', count: { op: 'gte', value: 1 } } }, 'where', /one of property, trait, context/],
  ];
  for (const [what, json, path, message] of refused) {
    it(`refuses ${what} at ${path || '(root)'}`, () => {
      const result = parseDestinationFilter(json);
      assert.ok(!result.ok);
      assert.equal(result.path, path);
      assert.match(result.message, message);
    });
  }

  it('accepts an empty filter (everything passes) and the example of the issue', () => {
    assert.ok(parseDestinationFilter({}).ok);
    assert.ok(parseDestinationFilter({ types: ['track', 'identify'], events: ['Order *', 'Signed Up'], where: { or: [{ property: 'total', op: 'gt', value: 50 }, { context: 'library.name', op: 'eq', value: 'analytics-node' }] } }).ok);
  });
});

describe('compiled filters: which calls pass', () => {
  const cases: Array<[string, DestinationFilter, CallType, string | null, Partial<CallFields>, boolean]> = [
    ['no rule: everything', {}, 'page', null, {}, true],
    ['types: a listed type', { types: ['track', 'identify'] }, 'identify', null, {}, true],
    ['types: another type', { types: ['track', 'identify'] }, 'page', null, {}, false],
    ['events: exact name', { events: ['Signed Up'] }, 'track', 'Signed Up', {}, true],
    ['events: exact name, case counts', { events: ['Signed Up'] }, 'track', 'signed up', {}, false],
    ['events: wildcard prefix', { events: ['Order *'] }, 'track', 'Order Completed', {}, true],
    ['events: wildcard needs its literal part', { events: ['Order *'] }, 'track', 'Orders', {}, false],
    ['events: wildcard in the middle, regex characters literal', { events: ['Cart (*) v1.0'] }, 'track', 'Cart (mobile) v1.0', {}, true],
    ['events: a dot is not a wildcard', { events: ['v1.0'] }, 'track', 'v1x0', {}, false],
    ['events: only track calls are matched by name', { events: ['Order *'] }, 'identify', null, {}, true],
    ['where: property', { where: { property: 'total', op: 'gt', value: 50 } }, 'track', 'Order Completed', { properties: { total: 60 } }, true],
    ['where: property too small', { where: { property: 'total', op: 'gt', value: 50 } }, 'track', 'Order Completed', { properties: { total: 40 } }, false],
    ['where: context dotted path', { where: { context: 'library.name', op: 'eq', value: 'analytics-go' } }, 'page', null, { context: { library: { name: 'analytics-go' } } }, true],
    ['where: trait', { where: { trait: 'plan', op: 'eq', value: 'pro' } }, 'identify', null, { traits: { plan: 'free' } }, false],
    ['where: not', { where: { not: { property: 'test', op: 'eq', value: true } } }, 'track', 'E', { properties: { test: true } }, false],
    ['all three must hold', { types: ['track'], events: ['Order *'], where: { property: 'total', op: 'gte', value: 10 } }, 'track', 'Order Completed', { properties: { total: 9 } }, false],
    ['delete: only types applies (no silent stop of deletion notices)', { events: ['Order *'], where: { property: 'total', op: 'gt', value: 50 } }, 'delete', null, {}, true],
    ['delete: types can exclude it', { types: ['track'] }, 'delete', null, {}, false],
  ];
  for (const [what, filter, type, event, f, expected] of cases) {
    it(what, () => assert.equal(compileFilter(filter).test(type, event, fields(f)), expected));
  }

  it('the call\'s objects are read only when a where needs them', () => {
    let parsed = 0;
    const lazy = () => { parsed++; return NO_FIELDS; };
    compiled({ types: ['track'], events: ['A'] }).test('track', 'A', lazy);
    assert.equal(parsed, 0);
    compiled({ where: { property: 'x', op: 'exists' } }).test('track', 'A', lazy);
    assert.equal(parsed, 1);
  });

  it('eventMatcher: exact names and several wildcards together', () => {
    const m = eventMatcher(['Signed Up', '*Viewed', 'Order * Step *']);
    assert.deepEqual(['Signed Up', 'Product Viewed', 'Order A Step 2', 'Signed', 'Order A'].map(m), [true, true, true, false, false]);
  });
});

describe('filterOf: compiled once per stored record', () => {
  it('keeps the compiled filter for the record and compiles a new record afresh', () => {
    const a = { filter: JSON.stringify({ types: ['track'] }) };
    assert.equal(filterOf(a), filterOf(a));
    const b = { filter: JSON.stringify({ types: ['page'] }) };
    assert.notEqual(filterOf(b), filterOf(a));
    assert.equal(filterOf(b)!.test('page', null, fields({})), true);
  });

  it('no filter: null; a stored filter that does not parse lets everything through rather than drop calls', () => {
    assert.equal(filterOf({ filter: null }), null);
    assert.equal(filterOf({ filter: '{"types":["nope"]}' }), null);
    assert.equal(filterOf({ filter: 'not json' }), null);
  });
});
