import type { DeferralTrace, DeliveryAttempt, FanoutTrace } from '@switchyard/platform/schemas/generated';

/** Where one destination's copy of a message is now. */
export type DestinationState = 'pending' | 'delivered' | 'retrying' | 'dead_lettered' | 'filtered';

/** GET /v1/messages/{messageId}: the response contract (the debugger page reads exactly this). */
export interface MessageTraceView {
  messageId: string;
  sourceId: string | null;
  type: string | null;
  receivedAt: string | null;
  destinations: Array<{
    destinationId: string;
    state: DestinationState;
    /** retrying: the tier it waits in; delivered / dead_lettered: the tier of the last attempt; else null. */
    tier: number | null;
    nextAttemptAt: string | null;
    deadLetterReason: string | null;
    /** filtered: why fan-out wrote no task for it (`integrations`, `filter`: the destination's event filter); else null. */
    filterReason: string | null;
    /** The retry policy its last attempt followed (`default` or `destination`); null before any attempt. */
    retryPolicy: string | null;
    attempts: Array<{
      attempt: number; urlIndex: number; at: string; tier: number; outcome: string; status: number | null; error: string | null; latencyMs: number;
      /** Which policy chose the next wait, and which of its tiers (from 1; null unless a retry was scheduled). */
      retryPolicy: string; retryStep: number | null;
    }>;
  }>;
}

interface Attempt {
  attempt: number; urlIndex: number; at: number; tier: number; outcome: string; status: number | null; error: string | null; latencyMs: number;
  nextTier: number | null; notBefore: number | null; deadLetterReason: string | null; retryPolicy: string; retryStep: number | null;
}

interface Trace {
  sourceId: string | null;
  type: string | null;
  receivedAt: number | null;
  /** Named by fan-out (tasks or filtered) or by attempts; an array, not a map: a message has few (memory). */
  /** `filtered`: the reason fan-out kept the message from the destination, or null. */
  destinations: Array<{ id: string; filtered: string | null; attempts: Attempt[] }>;
  /** Last time a record of this message arrived (the time bound). */
  seenAt: number;
}

export interface MessageTracesOptions {
  /** Messages kept; the least recently active are forgotten first. */
  max: number;
  /** Messages with no record for this long are forgotten. */
  windowMs: number;
}

/**
 * The per-message trace, built from the delivery-attempts topic (fan-out decisions and delivery
 * attempts). Pure and bounded: at most `max` messages, each forgotten once no record of it
 * arrived for `windowMs`; the map is kept in order of last activity, so both bounds evict from its
 * front. A message's state is derived when asked, from its records.
 */
export class MessageTraces {
  private readonly traces = new Map<string, Trace>();
  /** Ids repeat on every record: one string per id instead of one per record (bounded). */
  private readonly interned = new Map<string, string>();

  constructor(private readonly opts: MessageTracesOptions) {}

  get size(): number { return this.traces.size; }

  addFanout(r: FanoutTrace, seenAt: number): void {
    const t = this.touch(r.messageId, seenAt);
    t.sourceId = this.intern(r.sourceId);
    t.type = this.intern(r.eventType);
    t.receivedAt = r.receivedAt;
    for (const id of r.destinationIds) destinationOf(t, this.intern(id)).filtered = null;
    const reason = this.intern(r.filterReason ?? 'filtered');
    for (const id of r.filteredDestinationIds) destinationOf(t, this.intern(id)).filtered = reason;
  }

  addAttempt(r: DeliveryAttempt, seenAt: number): void {
    const t = this.touch(r.messageId, seenAt);
    t.sourceId ??= this.intern(r.sourceId);
    t.type ??= this.intern(r.eventType);
    t.receivedAt ??= r.receivedAt;
    destinationOf(t, this.intern(r.destinationId)).attempts.push({
      attempt: r.attempt, urlIndex: r.urlIndex, at: r.at, tier: r.tier, outcome: this.intern(r.outcome), status: r.status, error: r.error === null ? null : this.intern(r.error),
      latencyMs: r.latencyMs, nextTier: r.nextTier, notBefore: r.notBefore, deadLetterReason: r.deadLetterReason === null ? null : this.intern(r.deadLetterReason),
      retryPolicy: this.intern(r.retryPolicy), retryStep: r.retryStep,
    });
  }

  /**
   * A range of tasks delivery deferred together: each message gets the attempt defer() records for
   * one task (no request, outcome deferred, read from the delivery topic).
   */
  addDeferral(r: DeferralTrace, seenAt: number): void {
    const destinationId = this.intern(r.destinationId);
    const outcome = this.intern('deferred');
    const error = this.intern(r.error);
    const retryPolicy = this.intern(r.retryPolicy);
    for (const messageId of r.messageIds) {
      const t = this.touch(messageId, seenAt);
      t.sourceId ??= this.intern(r.sourceId);
      destinationOf(t, destinationId).attempts.push({
        attempt: r.attempt, urlIndex: -1, at: r.at, tier: 0, outcome, status: null, error, latencyMs: 0, nextTier: r.nextTier, notBefore: r.notBefore, deadLetterReason: null,
        retryPolicy, retryStep: null,
      });
    }
  }

  /** Forgets messages with no record since `now - windowMs`. */
  expire(now: number): number {
    const cutoff = now - this.opts.windowMs;
    let removed = 0;
    for (const [id, t] of this.traces) {
      if (t.seenAt >= cutoff) break;
      this.traces.delete(id);
      removed++;
    }
    return removed;
  }

  get(messageId: string): MessageTraceView | undefined {
    const t = this.traces.get(messageId);
    if (!t) return undefined;
    return {
      messageId, sourceId: t.sourceId, type: t.type, receivedAt: iso(t.receivedAt),
      destinations: [...t.destinations].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)).map((d) => {
        // Records of one message arrive in order (one partition, key messageId); `at` orders the
        // requests of parallel URLs and keeps replays after the attempts they follow.
        const attempts = [...d.attempts].sort((a, b) => a.at - b.at || a.attempt - b.attempt || a.urlIndex - b.urlIndex);
        return { destinationId: d.id, ...stateOf(d.filtered, attempts), attempts: attempts.map(attemptView) };
      }),
    };
  }

  private touch(messageId: string, seenAt: number): Trace {
    let t = this.traces.get(messageId);
    if (t) this.traces.delete(messageId);
    else t = { sourceId: null, type: null, receivedAt: null, destinations: [], seenAt };
    t.seenAt = Math.max(t.seenAt, seenAt);
    // Re-inserted at the end: the map stays in order of last activity.
    this.traces.set(messageId, t);
    if (this.traces.size > this.opts.max) this.traces.delete(this.traces.keys().next().value!);
    return t;
  }

  private intern(s: string): string {
    const known = this.interned.get(s);
    if (known !== undefined) return known;
    if (this.interned.size < 100_000) this.interned.set(s, s);
    return s;
  }
}

function destinationOf(t: Trace, id: string): Trace['destinations'][number] {
  let d = t.destinations.find((x) => x.id === id);
  if (!d) t.destinations.push((d = { id, filtered: null, attempts: [] }));
  return d;
}

function stateOf(filtered: string | null, attempts: Attempt[]): Pick<MessageTraceView['destinations'][number], 'state' | 'tier' | 'nextAttemptAt' | 'deadLetterReason' | 'filterReason' | 'retryPolicy'> {
  const last = attempts.at(-1);
  if (!last) return { state: filtered ? 'filtered' : 'pending', tier: null, nextAttemptAt: null, deadLetterReason: null, filterReason: filtered, retryPolicy: null };
  const { retryPolicy } = last;
  switch (last.outcome) {
    case 'delivered': return { state: 'delivered', tier: last.tier, nextAttemptAt: null, deadLetterReason: null, filterReason: null, retryPolicy };
    case 'dead_lettered': return { state: 'dead_lettered', tier: last.tier, nextAttemptAt: null, deadLetterReason: last.deadLetterReason, filterReason: null, retryPolicy };
    default: return { state: 'retrying', tier: last.nextTier, nextAttemptAt: iso(last.notBefore), deadLetterReason: null, filterReason: null, retryPolicy };
  }
}

function attemptView(a: Attempt): MessageTraceView['destinations'][number]['attempts'][number] {
  return {
    attempt: a.attempt, urlIndex: a.urlIndex, at: new Date(a.at).toISOString(), tier: a.tier, outcome: a.outcome, status: a.status, error: a.error, latencyMs: a.latencyMs,
    retryPolicy: a.retryPolicy, retryStep: a.retryStep,
  };
}

function iso(ms: number | null): string | null {
  return ms === null ? null : new Date(ms).toISOString();
}
