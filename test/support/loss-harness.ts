// Loss accounting for the fault suites (RELIABILITY.md): sends events with known messageIds
// through the HTTP tracking API at a bounded rate (batches and single calls), retrying refusals as
// a client library does, records which were acknowledged (2xx), and reconciles them at the
// receiver and in the dead-letter topic: every acknowledged event must be delivered at least once
// or dead-lettered with a reason. Prints one table row per scenario.
import { setTimeout as sleep } from 'node:timers/promises';
import type { DeadLetter } from '@switchyard/platform/schemas/generated';
import type { FaultReceiver } from './fault-receiver.js';
import { TopicReader } from './topic-reader.js';

/** RELIABILITY_SCALE=full (npm run test:reliability) runs the sizes RELIABILITY.md reports; `npm test` runs reduced ones. */
export const FULL = process.env.RELIABILITY_SCALE === 'full';
export const scale = <T>(reduced: T, full: T): T => (FULL ? full : reduced);

/** A small seeded generator (mulberry32): kill moments are random but the same on every run. */
export function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export interface LoadOptions {
  /** messageId prefix; ids are `${label}-${i}`. */
  label: string;
  /** The ingest base URL (read per request: a restarted ingest may listen elsewhere). */
  target: () => string;
  writeKey: string;
  events: number;
  ratePerSec: number;
  /** Events per /v1/batch call (default 10). */
  batchSize?: number;
  /** Share of events sent as single /v1/track calls (default 0.3). */
  singleShare?: number;
  /** Calls in flight at most (default 16). */
  concurrency?: number;
  /** A call refused for this long is given up: its events count as not acknowledged (default 120 s). */
  giveUpAfterMs?: number;
  /** The user and event name of event i (default: 50 users, "Fault Test"). */
  shape?: (i: number) => { userId: string; event: string };
  seed?: number;
}

/** Sends the events in the background; `done` resolves when every call was acknowledged or given up. */
export class Load {
  readonly ids: string[] = [];
  readonly acked = new Set<string>();
  readonly givenUp = new Set<string>();
  /** Events answered 4xx (other than 429): valid events must never get one. */
  readonly rejected = new Set<string>();
  readonly statuses = new Map<string, number>();
  retries = 0;
  done!: Promise<void>;
  private readonly auth: string;

  constructor(private readonly opts: LoadOptions) {
    this.auth = `Basic ${Buffer.from(`${opts.writeKey}:`).toString('base64')}`;
    for (let i = 0; i < opts.events; i++) this.ids.push(`${opts.label}-${i}`);
  }

  start(): this {
    this.done = this.run();
    return this;
  }

  private async run(): Promise<void> {
    const { events, ratePerSec, batchSize = 10, singleShare = 0.3, concurrency = 16 } = this.opts;
    const rng = seeded(this.opts.seed ?? 1);
    const t0 = Date.now();
    const inFlight = new Set<Promise<void>>();
    let i = 0;
    while (i < events) {
      const n = rng() < singleShare ? 1 : Math.min(batchSize, events - i);
      const indexes = Array.from({ length: n }, (_, k) => i + k);
      i += n;
      while (inFlight.size >= concurrency) await Promise.race(inFlight);
      const call = this.call(indexes).finally(() => inFlight.delete(call));
      inFlight.add(call);
      // Paced by events: the i-th event leaves no earlier than i / rate seconds after the start.
      const due = t0 + (i / ratePerSec) * 1000;
      if (due > Date.now()) await sleep(due - Date.now());
    }
    await Promise.all(inFlight);
  }

  private body(indexes: number[]): { path: string; json: unknown } {
    const shape = this.opts.shape ?? ((i: number) => ({ userId: `user-${i % 50}`, event: 'Fault Test' }));
    const call = (i: number) => ({ ...shape(i), messageId: this.ids[i], properties: { seq: i }, timestamp: new Date().toISOString() });
    if (indexes.length === 1) return { path: '/v1/track', json: call(indexes[0]!) };
    return { path: '/v1/batch', json: { batch: indexes.map((i) => ({ type: 'track', ...call(i) })) } };
  }

  private count(status: string): void {
    this.statuses.set(status, (this.statuses.get(status) ?? 0) + 1);
  }

  /** One API call, retried like a client library: on 429, 5xx, timeouts and connection errors, with backoff and Retry-After. */
  private async call(indexes: number[]): Promise<void> {
    const { path, json } = this.body(indexes);
    const text = JSON.stringify(json);
    const giveUpAt = Date.now() + (this.opts.giveUpAfterMs ?? 120_000);
    for (let attempt = 0; ; attempt++) {
      let status = 'error';
      let waitMs = Math.min(100 * 2 ** attempt, 2000);
      try {
        const res = await fetch(`${this.opts.target()}${path}`, {
          method: 'POST', headers: { authorization: this.auth, 'content-type': 'application/json' }, body: text, signal: AbortSignal.timeout(15_000),
        });
        status = String(res.status);
        await res.arrayBuffer();
        const retryAfter = Number(res.headers.get('retry-after'));
        if (Number.isFinite(retryAfter) && retryAfter > 0) waitMs = Math.min(retryAfter * 1000, 2000);
      } catch { /* connection refused or reset, timeout: retried */ }
      this.count(status);
      const code = Number(status);
      if (code >= 200 && code < 300) { for (const i of indexes) this.acked.add(this.ids[i]!); return; }
      if (code >= 400 && code < 500 && code !== 429) { for (const i of indexes) this.rejected.add(this.ids[i]!); return; }
      if (Date.now() + waitMs > giveUpAt) { for (const i of indexes) this.givenUp.add(this.ids[i]!); return; }
      this.retries++;
      await sleep(waitMs);
    }
  }
}

export interface Tally {
  scenario: string;
  sent: number;
  acknowledged: number;
  /** Acknowledged events the receiver accepted at least once. */
  delivered: number;
  /** Acceptances beyond the first, summed over events. */
  duplicated: number;
  /** Acknowledged events not delivered but in the dead-letter topic with a reason. */
  deadLettered: number;
  lost: number;
  /** Some lost messageIds, for the failure message. */
  lostSample: string[];
  deadLetterReasons: Record<string, number>;
  seconds: number;
}

export interface SettleOptions {
  scenario: string;
  load: Load;
  receiver: FaultReceiver;
  destinationId: string;
  /** The dead-letter topic; read from the beginning (started here, stopped before returning). */
  deadLetterTopic: string;
  brokers?: string;
  /** Bound on the wait for every acknowledged event to be accounted for. */
  timeoutMs?: number;
  /** Once accounted for, the receiver must stay quiet this long (late redeliveries are counted). */
  quietMs?: number;
  startedAt?: number;
}

/**
 * Waits (bounded) until every acknowledged event is delivered or dead-lettered and the receiver
 * has been quiet for a while, then counts. Never throws on loss: the tally says it, and the test asserts.
 */
export async function settle(o: SettleOptions): Promise<Tally> {
  const { load, receiver } = o;
  await load.done;
  const reader = await new TopicReader([o.deadLetterTopic], o.brokers).start();
  const letters = new Map<string, string>();
  const readLetters = () => {
    for (const d of reader.values<DeadLetter>(o.deadLetterTopic, (d) => d.task.destinationId === o.destinationId)) {
      try { letters.set(JSON.parse(d.task.body).messageId, d.reason); } catch { /* not an event body */ }
    }
  };
  const missing = () => [...load.acked].filter((id) => receiver.deliveredCount(id) === 0 && !letters.has(id));
  const deadline = Date.now() + (o.timeoutMs ?? 120_000);
  const quietMs = o.quietMs ?? 3000;
  try {
    for (;;) {
      readLetters();
      const open = missing().length;
      const quiet = Date.now() - receiver.lastActivity >= quietMs;
      if ((open === 0 && quiet) || Date.now() > deadline) break;
      await sleep(200);
    }
    readLetters();
  } finally {
    await reader.stop();
  }
  let delivered = 0;
  let duplicated = 0;
  let deadLettered = 0;
  const reasons: Record<string, number> = {};
  for (const id of load.acked) {
    const n = receiver.deliveredCount(id);
    if (n > 0) { delivered++; duplicated += n - 1; continue; }
    const reason = letters.get(id);
    if (reason) { deadLettered++; reasons[reason] = (reasons[reason] ?? 0) + 1; }
  }
  // Events never acknowledged may still have been delivered (the answer was lost): their extra copies count too.
  for (const id of load.ids) if (!load.acked.has(id)) duplicated += Math.max(0, receiver.deliveredCount(id) - 1);
  const lost = missing();
  const tally: Tally = {
    scenario: o.scenario, sent: load.ids.length, acknowledged: load.acked.size, delivered, duplicated, deadLettered,
    lost: lost.length, lostSample: lost.slice(0, 10), deadLetterReasons: reasons, seconds: o.startedAt ? (Date.now() - o.startedAt) / 1000 : 0,
  };
  report(tally, load);
  if (tally.duplicated > 0 || tally.lost > 0) {
    // The story of a few of them, for whoever has to find out why.
    const dup = [...load.acked].filter((id) => receiver.deliveredCount(id) > 1).slice(0, 3);
    for (const id of [...dup, ...tally.lostSample.slice(0, 3)]) {
      const t0 = startedAtOr(o.startedAt);
      console.log(`#   ${id}: ${receiver.log.filter((r) => r.messageId === id).map((r) => `${r.mode}@${((r.at - t0) / 1000).toFixed(2)}s`).join(' ')}; accepted ${receiver.accepted.filter((a) => a.messageId === id).map((a) => `${((a.at - t0) / 1000).toFixed(2)}s`).join(' ')}${letters.has(id) ? `; dead letter ${letters.get(id)}` : ''}`);
    }
  }
  return tally;
}

const startedAtOr = (t: number | undefined) => t ?? 0;

/** The RELIABILITY.md table row, and the details behind it. */
export function report(t: Tally, load?: Load): void {
  const pct = t.acknowledged ? ((t.duplicated / t.acknowledged) * 100).toFixed(2) : '0.00';
  console.log(`# reliability-row | ${t.scenario} | ${t.sent} | ${t.acknowledged} | ${t.delivered} | ${t.duplicated} (${pct} %) | ${t.deadLettered} | ${t.lost} |`);
  const statuses = load ? JSON.stringify(Object.fromEntries(load.statuses)) : '';
  console.log(`#   ${t.scenario}: ${t.seconds.toFixed(0)} s; ingest answers ${statuses}, ${load?.retries ?? 0} client retries, ${load?.givenUp.size ?? 0} given up, ${load?.rejected.size ?? 0} rejected; dead-letter reasons ${JSON.stringify(t.deadLetterReasons)}${t.lost ? `; lost e.g. ${t.lostSample.join(', ')}` : ''}`);
}

/** Runs `action` at `count` seeded random moments within [from, to] ms from now, one after another. */
export async function atRandomMoments(rng: () => number, count: number, fromMs: number, toMs: number, action: (n: number) => Promise<void>): Promise<void> {
  const t0 = Date.now();
  const moments = Array.from({ length: count }, () => fromMs + rng() * (toMs - fromMs)).sort((a, b) => a - b);
  for (const [n, at] of moments.entries()) {
    const wait = t0 + at - Date.now();
    if (wait > 0) await sleep(wait);
    await action(n);
  }
}
