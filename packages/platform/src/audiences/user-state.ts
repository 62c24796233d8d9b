import { counterKey, isObject, lookup, matches, MAX_COUNT, mergeCounterSpecs, type CounterSpec, type UserState } from './condition.js';

/**
 * A user's state (UserState, in condition.ts) as events and identify calls change it. Every
 * function here returns a new state and leaves its input alone (unchanged parts are shared), so a
 * decision can be tested and retried freely.
 */
export type { UserState };

export interface TrackCall {
  event: string;
  properties: Record<string, unknown>;
  /** Epoch ms: the event's (skew-corrected) time, not when it was processed. */
  timestamp: number;
}

/** Timestamps kept per counter: counts above this are never needed (conditions are capped alike). */
export const MAX_TIMESTAMPS = MAX_COUNT;

/**
 * Every event name also gets an unfiltered history, whether or not a definition needs it yet, so
 * an audience created later is backfilled from the past (webhooks destination: "when an audience
 * is first created, an identify call is delivered for every user in it"). Bounded so a user's
 * changelog record stays small: the last 30 days, 1 000 timestamps per event, 50 event names
 * (the least recently seen go first). Filtered counters (`where`) start when their definition does.
 */
export const HISTORY_WINDOW_MS = 30 * 86_400_000;
export const HISTORY_CAP = 1000;
export const MAX_HISTORY_EVENTS = 50;

export function emptyUserState(): UserState {
  return { traits: {}, counters: {}, lastSeen: {}, memberships: {}, computed: {} };
}

/**
 * An identify call: traits merged shallowly, as delivered (a nested object replaces the old one
 * whole; null is kept, and counts as absent for `exists`). `now` is unused: traits carry no time;
 * it is accepted so every apply* call looks alike.
 */
export function applyIdentify(state: UserState, traits: Record<string, unknown>, _now?: number): UserState {
  if (Object.keys(traits).length === 0) return state;
  return { ...state, traits: { ...state.traits, ...traits } };
}

/**
 * A track call: its timestamp goes into every counter whose event and filter it matches and into
 * the event's history (when inside the window), and it becomes the last seen event of those
 * counters when it is the latest (events can arrive out of order).
 */
export function applyTrack(state: UserState, call: TrackCall, specs: CounterSpec[], now: number): UserState {
  const known = byKey(specs);
  const keys = new Set([counterKey(call.event)]);
  for (const spec of known.values()) if (spec.event === call.event && matches(call.properties, spec.where)) keys.add(spec.key);
  const counters = { ...state.counters };
  const lastSeen = { ...state.lastSeen };
  for (const key of keys) {
    const { windowMs, cap } = retention(key, known);
    if (windowMs > 0 && call.timestamp > now - windowMs) counters[key] = withTimestamp(counters[key] ?? [], call.timestamp, windowMs, cap, now);
    const seen = lastSeen[key];
    if (!seen || call.timestamp >= seen.at) {
      const where = known.get(key)?.where;
      const value = where ? lookup(call.properties, where.property) : undefined;
      lastSeen[key] = { at: call.timestamp, properties: where && value !== undefined ? { [where.property]: value } : {} };
    }
  }
  evictHistory(counters, lastSeen, known);
  return { ...state, counters, lastSeen };
}

/** Specs merged (a key listed twice must not count an event twice), by key. */
function byKey(specs: CounterSpec[]): Map<string, CounterSpec> {
  return new Map(mergeCounterSpecs(specs).map((s) => [s.key, s]));
}

/** The event name of an unfiltered counter key (one that doubles as history), else undefined. */
function historyEvent(key: string): string | undefined {
  try {
    const parsed: unknown = JSON.parse(key);
    return Array.isArray(parsed) && parsed.length === 1 && typeof parsed[0] === 'string' ? parsed[0] : undefined;
  } catch {
    return undefined;
  }
}

/** How long and how many timestamps a key keeps; a key neither needed nor history keeps nothing. */
function retention(key: string, known: Map<string, CounterSpec>): { keep: boolean; windowMs: number; cap: number } {
  const spec = known.get(key);
  const history = historyEvent(key) !== undefined;
  return {
    keep: spec !== undefined || history,
    windowMs: Math.max(spec?.windowMs ?? 0, history ? HISTORY_WINDOW_MS : 0),
    cap: spec ? MAX_TIMESTAMPS : HISTORY_CAP,
  };
}

/** Beyond MAX_HISTORY_EVENTS event names nobody needs, the least recently seen are forgotten. */
function evictHistory(counters: UserState['counters'], lastSeen: UserState['lastSeen'], known: Map<string, CounterSpec>): void {
  const unneeded = Object.keys(lastSeen).filter((k) => !known.has(k) && historyEvent(k) !== undefined);
  if (unneeded.length <= MAX_HISTORY_EVENTS) return;
  unneeded.sort((a, b) => lastSeen[a]!.at - lastSeen[b]!.at);
  for (const key of unneeded.slice(0, unneeded.length - MAX_HISTORY_EVENTS)) {
    delete counters[key];
    delete lastSeen[key];
  }
}

/** Sorted insert (after equal times), then the window and the cap applied: oldest go first. */
function withTimestamp(list: readonly number[], t: number, windowMs: number, cap: number, now: number): number[] {
  let lo = 0, hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (list[mid]! <= t) lo = mid + 1; else hi = mid;
  }
  return trimmed([...list.slice(0, lo), t, ...list.slice(lo)], windowMs, cap, now);
}

function trimmed(list: number[], windowMs: number, cap: number, now: number): number[] {
  const start = now - windowMs;
  let first = 0;
  while (first < list.length && list[first]! <= start) first++;
  first = Math.max(first, list.length - cap);
  return first === 0 ? list : list.slice(first);
}

/**
 * Counters trimmed to their windows and caps; counters and last-seen entries that no spec needs
 * any more (a deleted audience) are dropped, except event history. Call it only with the
 * source's full, loaded set of specs. Nothing to prune → the same state.
 */
export function pruneCounters(state: UserState, specs: CounterSpec[], now: number): UserState {
  const known = byKey(specs);
  let changed = false;
  const counters: Record<string, number[]> = {};
  for (const [key, list] of Object.entries(state.counters)) {
    const { keep, windowMs, cap } = retention(key, known);
    const kept = keep && windowMs > 0 ? trimmed(list, windowMs, cap, now) : [];
    if (kept.length > 0) counters[key] = kept;
    if (kept !== list) changed = true;
  }
  const lastSeen: UserState['lastSeen'] = {};
  for (const [key, seen] of Object.entries(state.lastSeen)) {
    if (retention(key, known).keep) lastSeen[key] = seen;
    else changed = true;
  }
  return changed ? { ...state, counters, lastSeen } : state;
}

// ── changelog ─────────────────────────────────────────────────────────────────

const FORMAT = 1;

/** JSON text for the changelog topic; `v` lets a later format read older records. */
export function serializeUserState(state: UserState): string {
  return JSON.stringify({ v: FORMAT, ...state });
}

/**
 * The state from changelog text. Missing or malformed fields become empty (an older or partial
 * record still restores what it has); counters are re-sorted. Empty text or null is a fresh user.
 * Text that is not a JSON object throws: the caller decides whether to skip the record.
 */
export function parseUserState(text: string | null | undefined): UserState {
  if (text === null || text === undefined || text.trim() === '') return emptyUserState();
  const raw: unknown = JSON.parse(text);
  if (!isObject(raw)) throw new Error('user state is not a JSON object');
  const state = emptyUserState();
  if (isObject(raw.traits)) state.traits = raw.traits;
  if (isObject(raw.counters)) {
    for (const [key, list] of Object.entries(raw.counters)) {
      if (!Array.isArray(list)) continue;
      const times = list.filter((t): t is number => typeof t === 'number' && Number.isFinite(t)).sort((a, b) => a - b);
      if (times.length > 0) state.counters[key] = times.slice(-MAX_TIMESTAMPS);
    }
  }
  if (isObject(raw.lastSeen)) {
    for (const [key, seen] of Object.entries(raw.lastSeen)) {
      if (!isObject(seen) || typeof seen.at !== 'number' || !Number.isFinite(seen.at)) continue;
      state.lastSeen[key] = { at: seen.at, properties: isObject(seen.properties) ? seen.properties : {} };
    }
  }
  if (isObject(raw.memberships)) {
    for (const [id, member] of Object.entries(raw.memberships)) if (typeof member === 'boolean') state.memberships[id] = member;
  }
  if (isObject(raw.computed)) state.computed = raw.computed;
  return state;
}
