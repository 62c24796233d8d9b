import {
  DefinitionError, at, evaluateCall, isObject, parseCallCondition,
  type CallCondition, type CallFields, type ParseResult,
} from '../audiences/condition.js';

/**
 * A destination's event filter: which calls fan-out writes a task for.
 *
 *   { "types": ["track", "identify"], "events": ["Order *", "Signed Up"], "where": { "property": "total", "op": "gt", "value": 50 } }
 *
 * - `types`: the call types let through (default: all seven).
 * - `events`: track event names, exact or with `*` wildcards (any run of characters, case counts,
 *   like the integrations map); applies to track calls only, so other types are governed by
 *   `types` alone (default: every name).
 * - `where`: a call condition (the audience language with `property`, `trait` and `context`
 *   leaves: packages/platform/src/audiences/condition.ts) over the call's properties, traits and
 *   context. A call passes when it keeps all three.
 *
 * Delete notifications carry no event, properties or traits: only `types` applies to them, so a
 * `where` written for track calls never silently stops deletion requests reaching a destination.
 */
export const CALL_TYPES = ['track', 'page', 'screen', 'identify', 'group', 'alias', 'delete'] as const;
export type CallType = (typeof CALL_TYPES)[number];

export interface DestinationFilter {
  types?: CallType[];
  events?: string[];
  where?: CallCondition;
}

export const MAX_EVENT_PATTERNS = 100;
const MAX_NAME = 256;

/** Validates a filter; a refusal names the path inside it (`where.and[1].value`, `events[2]`). */
export function parseDestinationFilter(json: unknown): ParseResult<{ filter: DestinationFilter }> {
  try {
    return { ok: true, filter: destinationFilter(json) };
  } catch (err) {
    if (err instanceof DefinitionError) return { ok: false, message: err.message, path: err.path };
    throw err;
  }
}

function destinationFilter(raw: unknown): DestinationFilter {
  if (!isObject(raw)) throw new DefinitionError('', 'must be an object with types, events and/or where');
  for (const key of Object.keys(raw)) {
    if (key !== 'types' && key !== 'events' && key !== 'where') throw new DefinitionError(key, 'is not a field here (expected types, events, where)');
  }
  const filter: DestinationFilter = {};
  if (raw.types !== undefined) {
    const types = raw.types;
    if (!Array.isArray(types) || types.length === 0) throw new DefinitionError('types', `must be a list of 1 to ${CALL_TYPES.length} call types`);
    types.forEach((t, i) => {
      if (!CALL_TYPES.includes(t as CallType)) throw new DefinitionError(at('types', i), `must be one of ${CALL_TYPES.join(', ')}`);
      if (types.indexOf(t) !== i) throw new DefinitionError(at('types', i), `${String(t)} is listed twice`);
    });
    filter.types = types as CallType[];
  }
  if (raw.events !== undefined) {
    const events = raw.events;
    if (!Array.isArray(events) || events.length === 0 || events.length > MAX_EVENT_PATTERNS) throw new DefinitionError('events', `must be a list of 1 to ${MAX_EVENT_PATTERNS} event names`);
    events.forEach((e, i) => {
      if (typeof e !== 'string' || e === '' || e.length > MAX_NAME) throw new DefinitionError(at('events', i), `must be an event name of 1 to ${MAX_NAME} characters (* matches any characters)`);
    });
    filter.events = events as string[];
  }
  if (raw.where !== undefined) {
    const parsed = parseCallCondition(raw.where);
    if (!parsed.ok) throw new DefinitionError(parsed.path ? `where.${parsed.path}` : 'where', parsed.message);
    filter.where = parsed.condition;
  }
  return filter;
}

/** A filter made ready to test calls: event patterns compiled once, not per call. */
export interface CompiledFilter {
  /**
   * Whether a call passes. `fields` is called only when a `where` needs the call's objects, so a
   * caller can parse them lazily, once per call, whatever the number of destinations.
   */
  test(type: CallType, event: string | null, fields: () => CallFields): boolean;
}

export function compileFilter(filter: DestinationFilter): CompiledFilter {
  const types = filter.types ? new Set<string>(filter.types) : undefined;
  const eventTest = filter.events ? eventMatcher(filter.events) : undefined;
  const where = filter.where;
  return {
    test(type, event, fields) {
      if (types && !types.has(type)) return false;
      if (type === 'delete') return true;
      if (eventTest && type === 'track' && !eventTest(event ?? '')) return false;
      return where === undefined || evaluateCall(where, fields());
    },
  };
}

/** Exact names in a set, wildcard patterns in one anchored regular expression. */
export function eventMatcher(patterns: readonly string[]): (name: string) => boolean {
  const exact = new Set(patterns.filter((p) => !p.includes('*')));
  const wild = patterns.filter((p) => p.includes('*'));
  const regex = wild.length
    ? new RegExp(`^(?:${wild.map((p) => p.split('*').map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('.*')).join('|')})$`, 's')
    : undefined;
  return (name) => exact.has(name) || (regex !== undefined && regex.test(name));
}

const compiled = new WeakMap<object, CompiledFilter | null>();

/**
 * The compiled filter of a stored destination record (`filter`: JSON text or null), compiled the
 * first time it is asked for and kept as long as the record: a configuration change replaces the
 * record, so filters are compiled once per change, never per call. A stored filter that does not
 * parse (written by a newer version) lets everything through rather than drop calls silently.
 */
export function filterOf(destination: { filter?: string | null }): CompiledFilter | null {
  const known = compiled.get(destination);
  if (known !== undefined) return known;
  let result: CompiledFilter | null = null;
  if (destination.filter) {
    try {
      const parsed = parseDestinationFilter(JSON.parse(destination.filter));
      result = parsed.ok ? compileFilter(parsed.filter) : null;
    } catch {
      result = null;
    }
  }
  compiled.set(destination, result);
  return result;
}
