/**
 * The audience condition language: JSON, validated once when an audience is created, then evaluated
 * per user against their traits and event counters
 * (docs/decisions/0010-audiences-and-computed-traits.md).
 *
 *   trait:   { "trait": "address.country", "op": "eq", "value": "FR" }
 *   event:   { "event": "Order Completed", "where"?: { "property": "total", "op": "gt", "value": 50 },
 *              "within": "30d", "count": { "op": "gte", "value": 3 } }
 *   logic:   { "and": [...] }, { "or": [...] } (1–20 items), { "not": cond }; 8 levels at most.
 *
 * The same language, with `property`, `trait` and `context` leaves and no event counts, is a call
 * condition: a destination filter's `where`, evaluated per call (`parseCallCondition`, `evaluateCall`).
 *
 * Comparisons (traits and event properties alike):
 * - A name is looked up as a literal key first, then as a dotted path (`address.country`).
 * - `exists` is true for any value but null/absent; `not_exists` the opposite.
 * - `eq`/`neq` are strict (`"5"` is not `5`, case counts); `neq` is true when the value is absent.
 * - `gt`/`gte`/`lt`/`lte` take a number (the value may be a number or a numeric string) or an
 *   ISO 8601 date (the value may be an ISO string or epoch milliseconds); anything else is false.
 * - `contains`: substring of a string value, or an element of an array value.
 */

/**
 * What the audiences processor knows about one user: enough to evaluate every audience and
 * computed trait of the user's source, and to tell what it last delivered (so a restart, which
 * restores this from the changelog, neither forgets nor re-sends). Kept by user-state.ts.
 */
export interface UserState {
  traits: Record<string, unknown>;
  /** Event timestamps per counter key, ascending, pruned to the key's window. */
  counters: Record<string, number[]>;
  /** The latest matching event per counter key; `properties` holds only the filter's property. */
  lastSeen: Record<string, { at: number; properties: Record<string, unknown> }>;
  /** Audience id → membership last delivered. */
  memberships: Record<string, boolean>;
  /** Computed trait id → value last delivered. */
  computed: Record<string, unknown>;
}

export const COMPARISON_OPS = ['eq', 'neq', 'exists', 'not_exists', 'gt', 'gte', 'lt', 'lte', 'contains'] as const;
export type ComparisonOp = (typeof COMPARISON_OPS)[number];
export const COUNT_OPS = ['gte', 'gt', 'eq', 'lte', 'lt'] as const;
export type CountOp = (typeof COUNT_OPS)[number];
export type Scalar = string | number | boolean;

export type Comparison =
  | { op: 'exists' | 'not_exists' }
  | { op: Exclude<ComparisonOp, 'exists' | 'not_exists'>; value: Scalar };
export type TraitCondition = { trait: string } & Comparison;
export type PropertyFilter = { property: string } & Comparison;
/** `30d`, `12h`, `45m`, `90s`. */
export type Duration = `${number}${'d' | 'h' | 'm' | 's'}`;
export interface EventCondition {
  event: string;
  where?: PropertyFilter;
  within: Duration;
  count: { op: CountOp; value: number };
}
/** and / or / not over leaves of one kind of condition. */
export type Logic<Leaf> = Leaf | { and: Array<Logic<Leaf>> } | { or: Array<Logic<Leaf>> } | { not: Logic<Leaf> };
/** An audience condition: over a user's traits and event counts. */
export type Condition = Logic<TraitCondition | EventCondition>;
/** A `context` comparison of one call: `{ "context": "library.name", "op": "eq", "value": "analytics-node" }`. */
export type ContextCondition = { context: string } & Comparison;
/**
 * A call condition (a destination's filter `where`): over one call's `properties`, `traits` and
 * `context`, with the same comparisons and logic as audiences, but no event counts.
 */
export type CallCondition = Logic<PropertyFilter | TraitCondition | ContextCondition>;
/** The free-form objects of one call a call condition reads (absent ones are `{}`). */
export interface CallFields { properties: Record<string, unknown>; traits: Record<string, unknown>; context: Record<string, unknown> }

/** One event counter a definition needs: the timestamps of matching track calls, kept for `windowMs`. */
export interface CounterSpec {
  /** Stable text of event + filter: the key of the user's counter and last-seen entry. */
  key: string;
  event: string;
  where?: PropertyFilter;
  /** The longest window any definition needs for this key; 0 keeps no timestamps, only the last seen event. */
  windowMs: number;
}

export const MAX_DEPTH = 8;
export const MAX_ITEMS = 20;
/** Per-user evaluation cost stays bounded even with wide trees. */
export const MAX_CONDITIONS = 200;
/** Timestamps kept per counter; a count beyond this could never be observed, so it is refused. */
export const MAX_COUNT = 10_000;
export const MAX_WINDOW_MS = 365 * 86_400_000;
const MAX_NAME = 256;

export type ParseResult<T> = { ok: true } & T | { ok: false; message: string; path: string };

/** A definition refused, with where: `and[1].count.value`; '' is the whole definition. */
export class DefinitionError extends Error {
  constructor(readonly path: string, message: string) { super(message); }
}

type Json = Record<string, unknown>;
export const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

export function at(path: string, key: string | number): string {
  if (typeof key === 'number') return `${path}[${key}]`;
  return path === '' ? key : `${path}.${key}`;
}

export function parseCondition(json: unknown): ParseResult<{ condition: Condition }> {
  return parseLogic(json, AUDIENCE_LEAVES, (condition) => ({ condition }));
}

/** A call condition (a destination filter's `where`): property, trait and context leaves, and/or/not. */
export function parseCallCondition(json: unknown): ParseResult<{ condition: CallCondition }> {
  return parseLogic(json, CALL_LEAVES, (condition) => ({ condition }));
}

/** How each leaf kind of a language is parsed, by the key that names it. */
type Leaves<Leaf> = Record<string, (raw: Json, path: string) => Leaf>;

const comparisonLeaf = <K extends string>(key: K) => (raw: Json, path: string) => {
  onlyKeys(raw, path, [key, 'op', 'value']);
  return { [key]: fieldName(raw, path, key), ...comparison(raw, path) } as { [P in K]: string } & Comparison;
};

const AUDIENCE_LEAVES: Leaves<TraitCondition | EventCondition> = { trait: comparisonLeaf('trait'), event: eventCondition };
const CALL_LEAVES: Leaves<PropertyFilter | TraitCondition | ContextCondition> = {
  property: comparisonLeaf('property'), trait: comparisonLeaf('trait'), context: comparisonLeaf('context'),
};

function parseLogic<Leaf, R>(json: unknown, leaves: Leaves<Leaf>, wrap: (c: Logic<Leaf>) => R): ParseResult<R> {
  try {
    const budget = { left: MAX_CONDITIONS };
    return { ok: true, ...wrap(logic(json, '', 1, budget, leaves)) };
  } catch (err) {
    if (err instanceof DefinitionError) return { ok: false, message: err.message, path: err.path };
    throw err;
  }
}

const LOGIC_KINDS = ['and', 'or', 'not'] as const;

function logic<Leaf>(raw: unknown, path: string, depth: number, budget: { left: number }, leaves: Leaves<Leaf>): Logic<Leaf> {
  const allKinds = [...Object.keys(leaves), ...LOGIC_KINDS];
  if (!isObject(raw)) throw new DefinitionError(path, `must be an object with one of ${allKinds.join(', ')}`);
  const kinds = allKinds.filter((k) => k in raw);
  if (kinds.length === 0) throw new DefinitionError(path, `must have one of ${allKinds.join(', ')}`);
  if (kinds.length > 1) throw new DefinitionError(path, `has both ${kinds[0]} and ${kinds[1]}; one kind per condition`);
  if (depth > MAX_DEPTH) throw new DefinitionError(path, `conditions nest at most ${MAX_DEPTH} levels deep`);
  if (--budget.left < 0) throw new DefinitionError(path, `a definition has at most ${MAX_CONDITIONS} conditions`);
  const kind = kinds[0]!;
  switch (kind) {
    case 'not':
      onlyKeys(raw, path, ['not']);
      return { not: logic(raw.not, at(path, 'not'), depth + 1, budget, leaves) };
    case 'and':
    case 'or': {
      onlyKeys(raw, path, [kind]);
      const items = raw[kind];
      const here = at(path, kind);
      if (!Array.isArray(items) || items.length === 0 || items.length > MAX_ITEMS) {
        throw new DefinitionError(here, `must be a list of 1 to ${MAX_ITEMS} conditions`);
      }
      const parsed = items.map((item, i) => logic(item, at(here, i), depth + 1, budget, leaves));
      return kind === 'and' ? { and: parsed } : { or: parsed };
    }
    default:
      return leaves[kind]!(raw, path);
  }
}

function eventCondition(raw: Json, path: string): EventCondition {
  onlyKeys(raw, path, ['event', 'where', 'within', 'count']);
  const event = eventName(raw, path);
  const where = raw.where === undefined ? undefined : propertyFilter(raw.where, at(path, 'where'));
  const within = duration(raw, path);
  const countPath = at(path, 'count');
  if (!isObject(raw.count)) throw new DefinitionError(countPath, 'must be an object { op, value }');
  onlyKeys(raw.count, countPath, ['op', 'value']);
  const op = raw.count.op;
  if (!COUNT_OPS.includes(op as CountOp)) throw new DefinitionError(at(countPath, 'op'), `must be one of ${COUNT_OPS.join(', ')}`);
  const value = raw.count.value;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > MAX_COUNT) {
    throw new DefinitionError(at(countPath, 'value'), `must be a whole number from 0 to ${MAX_COUNT}`);
  }
  return { event, ...(where ? { where } : {}), within, count: { op: op as CountOp, value } };
}

/** The event name of an event condition or computed trait. */
export function eventName(raw: Json, path: string): string {
  const v = raw.event;
  if (typeof v !== 'string' || v === '' || v.length > MAX_NAME) throw new DefinitionError(at(path, 'event'), `must be an event name of 1 to ${MAX_NAME} characters`);
  return v;
}

/** A `within` duration: a positive whole number of d, h, m or s, at most a year. */
export function duration(raw: Json, path: string): Duration {
  const v = raw.within;
  const ms = typeof v === 'string' ? durationMs(v) : undefined;
  if (ms === undefined) throw new DefinitionError(at(path, 'within'), 'must be a duration such as 30d, 12h, 45m or 90s');
  if (ms > MAX_WINDOW_MS) throw new DefinitionError(at(path, 'within'), 'must be at most 365d');
  return v as Duration;
}

const UNIT_MS = { d: 86_400_000, h: 3_600_000, m: 60_000, s: 1000 } as const;

export function durationMs(text: string): number | undefined {
  const m = /^([1-9]\d{0,8})([dhms])$/.exec(text);
  return m ? Number(m[1]) * UNIT_MS[m[2] as keyof typeof UNIT_MS] : undefined;
}

/** A `where` filter on event properties: `{ property, op, value? }`. */
export function propertyFilter(raw: unknown, path: string): PropertyFilter {
  if (!isObject(raw)) throw new DefinitionError(path, 'must be an object { property, op, value }');
  onlyKeys(raw, path, ['property', 'op', 'value']);
  return { property: fieldName(raw, path, 'property'), ...comparison(raw, path) };
}

/** A trait or property name: a literal key or a dotted path with no empty segment. */
export function fieldName(raw: Json, path: string, field: string): string {
  const v = raw[field];
  if (typeof v !== 'string' || v === '' || v.length > MAX_NAME || v.split('.').includes('')) {
    throw new DefinitionError(at(path, field), `must be a name of 1 to ${MAX_NAME} characters (dotted paths allowed, e.g. address.country)`);
  }
  return v;
}

function comparison(raw: Json, path: string): Comparison {
  const op = raw.op;
  if (!COMPARISON_OPS.includes(op as ComparisonOp)) throw new DefinitionError(at(path, 'op'), `must be one of ${COMPARISON_OPS.join(', ')}`);
  const valuePath = at(path, 'value');
  if (op === 'exists' || op === 'not_exists') {
    // null is what a form sends for "no value"; anything else is a mistake worth reporting.
    if (raw.value !== undefined && raw.value !== null) throw new DefinitionError(valuePath, `is not used with ${op}`);
    return { op };
  }
  const value = raw.value;
  const scalar = typeof value === 'string' || typeof value === 'boolean' || (typeof value === 'number' && Number.isFinite(value));
  if (!scalar) throw new DefinitionError(valuePath, `${op} needs a string, number or boolean value`);
  if ((op === 'gt' || op === 'gte' || op === 'lt' || op === 'lte') && typeof value !== 'number' && parseTime(value) === undefined) {
    throw new DefinitionError(valuePath, `${op} needs a number or an ISO 8601 date`);
  }
  return { op: op as Exclude<ComparisonOp, 'exists' | 'not_exists'>, value };
}

function onlyKeys(raw: Json, path: string, allowed: readonly string[]): void {
  for (const key of Object.keys(raw)) {
    if (!allowed.includes(key)) throw new DefinitionError(at(path, key), `is not a field here (expected ${allowed.join(', ')})`);
  }
}

// ── evaluation ────────────────────────────────────────────────────────────────

const ISO_TIME = /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?$/i;

/**
 * An ISO 8601 date or date-time as epoch ms (UTC when no zone is given, unlike Date.parse for
 * date-times), or epoch ms as a number.
 */
export function parseTime(v: unknown): number | undefined {
  if (typeof v === 'number') return Number.isFinite(v) ? v : undefined;
  if (typeof v !== 'string') return undefined;
  const text = v.trim();
  const m = ISO_TIME.exec(text);
  if (!m) return undefined;
  let normalised = text.toUpperCase().replace(' ', 'T');
  if (normalised.includes('T') && m[1] === undefined) normalised += 'Z';
  else if (m[1] && /^[+-]\d{4}$/.test(m[1])) normalised = `${normalised.slice(0, -2)}:${normalised.slice(-2)}`;
  const ms = Date.parse(normalised);
  // Date.parse rolls 31 February over into March; that is not a real date.
  const day = Number(text.slice(8, 10));
  if (Number.isNaN(ms) || new Date(Date.UTC(Number(text.slice(0, 4)), Number(text.slice(5, 7)) - 1, day)).getUTCDate() !== day) return undefined;
  return ms;
}

/** A value by literal key, else by dotted path through nested objects (own properties only). */
export function lookup(obj: Record<string, unknown>, name: string): unknown {
  if (Object.hasOwn(obj, name)) return obj[name];
  let current: unknown = obj;
  for (const segment of name.split('.')) {
    if (!isObject(current) || !Object.hasOwn(current, segment)) return undefined;
    current = current[segment];
  }
  return current;
}

const NUMERIC = /^\s*[+-]?(?:\d+\.?\d*|\.\d+)(?:e[+-]?\d+)?\s*$/i;

function asNumber(v: unknown): number | undefined {
  if (typeof v === 'number') return Number.isFinite(v) ? v : undefined;
  if (typeof v === 'string' && NUMERIC.test(v)) return Number(v);
  return undefined;
}

export function compare(actual: unknown, c: Comparison): boolean {
  switch (c.op) {
    case 'exists': return actual !== undefined && actual !== null;
    case 'not_exists': return actual === undefined || actual === null;
    case 'eq': return actual === c.value;
    case 'neq': return actual !== c.value;
    case 'contains':
      if (Array.isArray(actual)) return actual.includes(c.value);
      return typeof actual === 'string' && typeof c.value === 'string' && actual.includes(c.value);
    default: {
      // Ordering: numbers against numbers, otherwise times against times (validated on parse).
      const [a, b] = typeof c.value === 'number' ? [asNumber(actual), c.value] : [parseTime(actual), parseTime(c.value)];
      if (a === undefined || b === undefined) return false;
      return c.op === 'gt' ? a > b : c.op === 'gte' ? a >= b : c.op === 'lt' ? a < b : a <= b;
    }
  }
}

/** Whether a track call's properties pass a `where` filter (no filter passes everything). */
export function matches(properties: Record<string, unknown>, where: PropertyFilter | undefined): boolean {
  return where === undefined || compare(lookup(properties, where.property), where);
}

export function counterKey(event: string, where?: PropertyFilter): string {
  return JSON.stringify(where ? [event, where.property, where.op, 'value' in where ? where.value : null] : [event]);
}

/** Timestamps after `now - windowMs` in an ascending list (future timestamps count: ingest corrected skew). */
export function countWithin(timestamps: readonly number[], windowMs: number, now: number): number {
  const start = now - windowMs;
  let lo = 0, hi = timestamps.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (timestamps[mid]! > start) hi = mid; else lo = mid + 1;
  }
  return timestamps.length - lo;
}

export function compareCount(count: number, c: { op: CountOp; value: number }): boolean {
  switch (c.op) {
    case 'gte': return count >= c.value;
    case 'gt': return count > c.value;
    case 'eq': return count === c.value;
    case 'lte': return count <= c.value;
    case 'lt': return count < c.value;
  }
}

export function evaluate(condition: Condition, user: UserState, now: number): boolean {
  if ('and' in condition) return condition.and.every((c) => evaluate(c, user, now));
  if ('or' in condition) return condition.or.some((c) => evaluate(c, user, now));
  if ('not' in condition) return !evaluate(condition.not, user, now);
  if ('trait' in condition) return compare(lookup(user.traits, condition.trait), condition);
  const timestamps = user.counters[counterKey(condition.event, condition.where)] ?? [];
  return compareCount(countWithin(timestamps, windowOf(condition.within), now), condition.count);
}

/**
 * Whether one call keeps a call condition: `property` reads its properties, `trait` its traits,
 * `context` its context (each `{}` when the call has none), with the comparisons above.
 */
export function evaluateCall(condition: CallCondition, call: CallFields): boolean {
  if ('and' in condition) return condition.and.every((c) => evaluateCall(c, call));
  if ('or' in condition) return condition.or.some((c) => evaluateCall(c, call));
  if ('not' in condition) return !evaluateCall(condition.not, call);
  if ('property' in condition) return compare(lookup(call.properties, condition.property), condition);
  if ('trait' in condition) return compare(lookup(call.traits, condition.trait), condition);
  return compare(lookup(call.context, condition.context), condition);
}

function windowOf(within: Duration): number {
  const ms = durationMs(within);
  if (ms === undefined) throw new Error(`invalid duration ${within}: conditions must come from parseCondition`);
  return ms;
}

/** The event counters a condition reads, one per key, each with the longest window it needs. */
export function counterKeys(condition: Condition): CounterSpec[] {
  const found: CounterSpec[] = [];
  const walk = (c: Condition): void => {
    if ('and' in c) c.and.forEach(walk);
    else if ('or' in c) c.or.forEach(walk);
    else if ('not' in c) walk(c.not);
    else if ('event' in c) {
      found.push({ key: counterKey(c.event, c.where), event: c.event, ...(c.where ? { where: c.where } : {}), windowMs: windowOf(c.within) });
    }
  };
  walk(condition);
  return mergeCounterSpecs(found);
}

/** Specs of many definitions → one per key with the longest window, sorted by key. */
export function mergeCounterSpecs(...lists: CounterSpec[][]): CounterSpec[] {
  const byKey = new Map<string, CounterSpec>();
  for (const spec of lists.flat()) {
    const seen = byKey.get(spec.key);
    if (!seen || seen.windowMs < spec.windowMs) byKey.set(spec.key, spec);
  }
  return [...byKey.values()].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
}
