// Pure pieces of the debugger page, kept apart from the DOM code so they can be unit-tested in
// Node (services/control/src/debugger-feed.test.ts): reading a Server-Sent Events stream, the
// feed's filter, the bounded list kept newest first by receivedAt, and what counts as a final
// delivery state.

/**
 * Incremental Server-Sent Events parser (the WHATWG event-stream format): feed it text chunks as
 * they arrive; it calls onEvent({ event, data, id }) for each complete event. Comments
 * (heartbeats) are skipped. We read the stream with fetch() rather than EventSource because
 * EventSource cannot send the Authorization header, and a token in the URL would land in logs.
 */
export class SseParser {
  /** @param {(e: { event: string, data: string, id: string | undefined }) => void} onEvent */
  constructor(onEvent) {
    this.onEvent = onEvent;
    this.buffer = '';
    this.reset();
  }

  reset() {
    this.event = '';
    /** @type {string[]} */
    this.data = [];
    /** @type {string | undefined} */
    this.id = undefined;
  }

  /** @param {string} chunk */
  push(chunk) {
    this.buffer += chunk;
    // A trailing \r may be the first half of \r\n: wait for the next chunk to tell.
    const lines = this.buffer.split(/\r\n|\r(?!$)|\n/);
    this.buffer = lines.pop() ?? '';
    for (const line of lines) this.line(line);
  }

  /** @param {string} line */
  line(line) {
    if (line === '') {
      if (this.data.length > 0) this.onEvent({ event: this.event || 'message', data: this.data.join('\n'), id: this.id });
      this.reset();
      return;
    }
    if (line.startsWith(':')) return;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'event') this.event = value;
    else if (field === 'data') this.data.push(value);
    else if (field === 'id') this.id = value;
  }
}

/**
 * @typedef {{ messageId: string, type: string, name: string | null, userId: string | null, anonymousId: string | null, timestamp: string, receivedAt: string, call: Record<string, unknown> }} LiveCall
 * @typedef {{ type: string, name: string, user: string }} Filter
 */

/**
 * Does a call pass the filter? Type is an exact choice (empty: any); name and user are
 * case-insensitive substrings of the event/name and of the userId or anonymousId.
 * @param {LiveCall} call
 * @param {Filter} filter
 */
export function matchesFilter(call, filter) {
  if (filter.type && call.type !== filter.type) return false;
  const name = filter.name.trim().toLowerCase();
  if (name && !(call.name ?? '').toLowerCase().includes(name)) return false;
  const user = filter.user.trim().toLowerCase();
  if (user && !`${call.userId ?? ''}\n${call.anonymousId ?? ''}`.toLowerCase().includes(user)) return false;
  return true;
}

/**
 * Inserts a call into a list kept newest first by `receivedAt`, at its place: calls arrive in
 * the order the ingest topic's partitions are read, not in the order ingest received them (five
 * calls sent within 35 ms can arrive as .879, .874, .865, .883, .851). Among equal times the later
 * arrival goes first. Keeps at most `max`: the oldest by receivedAt fall off — the new call itself
 * when the list is full of newer ones. Returns the call's index (-1 when it fell off) and the
 * removed calls, so the caller can place its row and drop theirs.
 * @template {{ receivedAt: string }} T
 * @param {T[]} list
 * @param {T} item
 * @param {number} max
 * @returns {{ index: number, removed: T[] }}
 */
export function insertByReceivedAt(list, item, max) {
  const at = receivedTime(item);
  // Binary search for the first call received at or before this one (the list is sorted).
  let lo = 0;
  let hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (receivedTime(/** @type {T} */ (list[mid])) > at) lo = mid + 1;
    else hi = mid;
  }
  list.splice(lo, 0, item);
  const removed = list.length > max ? list.splice(max) : [];
  return { index: lo < max ? lo : -1, removed };
}

/** receivedAt in ms; a call without a readable time sorts as the oldest. @param {{ receivedAt: string }} item */
function receivedTime(item) {
  const t = Date.parse(item.receivedAt);
  return Number.isNaN(t) ? -Infinity : t;
}

/** Delivery states after which nothing more will happen to a message on its own. */
export const FINAL_STATES = new Set(['delivered', 'dead_lettered', 'filtered']);

/**
 * Is a trace finished (every destination in a final state)? A trace with no destinations yet
 * is not: fan-out may not have reached the message.
 * @param {{ destinations: Array<{ state: string }> } | null} trace
 */
export function traceIsFinal(trace) {
  return trace !== null && trace.destinations.length > 0 && trace.destinations.every((d) => FINAL_STATES.has(d.state));
}

/**
 * Has a destination of the trace an attempt at or after `since` (ISO)? After a replay, the trace
 * is final (dead-lettered) until the replayed task's first attempt shows up.
 * @param {{ destinations: Array<{ attempts: Array<{ at: string }> }> } | null} trace
 * @param {string} since
 */
export function hasAttemptSince(trace, since) {
  const t = Date.parse(since);
  return trace !== null && trace.destinations.some((d) => d.attempts.some((a) => Date.parse(a.at) >= t));
}

/**
 * The one line the feed shows for a call's user: the userId, else the anonymous id marked as such.
 * @param {Pick<LiveCall, 'userId' | 'anonymousId'>} call
 */
export function userLabel(call) {
  if (call.userId) return call.userId;
  if (call.anonymousId) return `anonymous ${call.anonymousId}`;
  return '—';
}
