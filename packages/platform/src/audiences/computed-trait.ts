import {
  at, counterKey, countWithin, DefinitionError, duration, durationMs, eventName, fieldName, isObject, propertyFilter,
  type CounterSpec, type Duration, type ParseResult, type PropertyFilter,
} from './condition.js';
import type { UserState } from './user-state.js';

/**
 * Computed traits: user properties derived from events, delivered like audience memberships
 * (docs/decisions/0010-audiences-and-computed-traits.md).
 *
 *   { "kind": "event_count", "event": "Order Completed", "where"?: {...}, "within": "30d" } → a number
 *   { "kind": "last_seen", "event": "Order Completed", "where"?: {...} }      → ISO time of the latest, or null
 *   { "kind": "latest_property", "event": "Plan Changed", "property": "plan" } → the property's value on the
 *     latest such event that has it, or null (an event without the property does not erase it)
 */
export type ComputedTrait =
  | { kind: 'event_count'; event: string; where?: PropertyFilter; within: Duration }
  | { kind: 'last_seen'; event: string; where?: PropertyFilter }
  | { kind: 'latest_property'; event: string; property: string };

export const COMPUTED_KINDS = ['event_count', 'last_seen', 'latest_property'] as const;
export type ComputedValue = string | number | boolean | null;

export function parseComputedTrait(json: unknown): ParseResult<{ trait: ComputedTrait }> {
  try {
    return { ok: true, trait: definition(json) };
  } catch (err) {
    if (err instanceof DefinitionError) return { ok: false, message: err.message, path: err.path };
    throw err;
  }
}

function definition(raw: unknown): ComputedTrait {
  if (!isObject(raw)) throw new DefinitionError('', 'must be an object with kind and event');
  const kind = raw.kind;
  const allowed = kind === 'event_count' ? ['kind', 'event', 'where', 'within']
    : kind === 'last_seen' ? ['kind', 'event', 'where']
    : kind === 'latest_property' ? ['kind', 'event', 'property']
    : undefined;
  if (!allowed) throw new DefinitionError('kind', `must be one of ${COMPUTED_KINDS.join(', ')}`);
  for (const key of Object.keys(raw)) {
    if (!allowed.includes(key)) throw new DefinitionError(key, `is not a field of ${String(kind)} (expected ${allowed.join(', ')})`);
  }
  const event = eventName(raw, '');
  const where = raw.where === undefined ? undefined : propertyFilter(raw.where, at('', 'where'));
  const filter = where ? { where } : {};
  if (kind === 'event_count') return { kind, event, ...filter, within: duration(raw, '') };
  if (kind === 'last_seen') return { kind, event, ...filter };
  return { kind: 'latest_property', event, property: fieldName(raw, '', 'property') };
}

/**
 * latest_property reads the last-seen entry of "events that have the property": the filter both
 * skips events without it and makes the entry keep its value.
 */
function latestFilter(property: string): PropertyFilter {
  return { property, op: 'exists' };
}

/** The counters a computed trait reads (windowMs 0: the last seen event only, no timestamps). */
export function computedCounterSpecs(def: ComputedTrait): CounterSpec[] {
  const where = def.kind === 'latest_property' ? latestFilter(def.property) : def.where;
  const windowMs = def.kind === 'event_count' ? durationMs(def.within) ?? 0 : 0;
  return [{ key: counterKey(def.event, where), event: def.event, ...(where ? { where } : {}), windowMs }];
}

export function computeTrait(def: ComputedTrait, user: UserState, now: number): ComputedValue {
  switch (def.kind) {
    case 'event_count':
      return countWithin(user.counters[counterKey(def.event, def.where)] ?? [], durationMs(def.within) ?? 0, now);
    case 'last_seen': {
      const seen = user.lastSeen[counterKey(def.event, def.where)];
      return seen ? new Date(seen.at).toISOString() : null;
    }
    case 'latest_property': {
      const value = user.lastSeen[counterKey(def.event, latestFilter(def.property))]?.properties[def.property];
      if (value === undefined || value === null) return null;
      // A user property is a scalar; objects and arrays are delivered as their JSON text.
      return typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean' ? value : JSON.stringify(value);
    }
  }
}

/** The value a user has before anything was delivered: a count of 0 or null is not worth a call. */
export function baselineValue(def: ComputedTrait): ComputedValue {
  return def.kind === 'event_count' ? 0 : null;
}
