// Loss accounting for the fault suites (RELIABILITY.md): sends events with known messageIds
// through the HTTP tracking API at a bounded rate (batches and single calls), retrying refusals as
// a client library does, records which were acknowledged (2xx), and reconciles them at the
// receiver and in the dead-letter topic: every acknowledged event must be delivered at least once
// or dead-lettered with a reason. Prints one table row per scenario.
import { setTimeout as sleep } from 'node:timers/promises';
import type { DeadLetter, DeferredRange, DeliveryTask } from '@switchyard/platform/schemas/generated';
import type { AcceptedCall, FaultReceiver } from './fault-receiver.js';
import { TopicReader } from './topic-reader.js';
import { seeded } from '../../tools/seeded-random.js';

/** RELIABILITY_SCALE=full (npm run test:reliability) runs the sizes RELIABILITY.md reports; `npm test` runs reduced ones. */
export const FULL = process.env.RELIABILITY_SCALE === 'full';
export const scale = <T>(reduced: T, full: T): T => (FULL ? full : reduced);

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
  /**
   * (messageId, destinationId) pairs written to the delivery topic (read_committed) more times than
   * their event is in the ingest topic: duplicates made by fan-out, which is exactly-once. Counted
   * when `taskTopic` and `inputTopic` are given.
   */
  duplicateTasks?: number;
  /**
   * Events in the ingest topic more than once: a client re-sent a call whose records had reached
   * Kafka though ingest answered 503 (its ack timeout) or the answer was lost. At-least-once at the
   * API, as documented; fan-out rightly makes a task of each copy.
   */
  ingestDuplicates?: number;
  /**
   * Deliveries beyond one per task, summed over events (counted with `duplicateTasks`): re-sends by
   * delivery, which is at-least-once. `duplicated` is these plus the deliveries of tasks written twice.
   */
  redelivered?: number;
  /**
   * Of the re-sends (`redelivered`, or for identify calls `duplicated`): those that followed a copy the
   * receiver answered `senderTimeoutMs` or more after delivery had started it (webhook-timestamp).
   * Delivery had timed the request out by then, so it could not know the call had arrived; on the
   * two-core test machine it happens when a catch-up burst after an outage starves the receiver.
   */
  resentAfterTimeout?: number;
  /**
   * Of the re-sends not counted in `resentAfterTimeout`: at most one per event whose earlier copy
   * reached the receiver within `FROZEN_WORK_MS` before an instance was frozen (`frozenAt`). That
   * instance had not committed it yet (its answer, retry record or commit still under way), and to
   * its group a frozen member is a crashed one: the partition's next owner sends it again.
   */
  resentAfterFreeze?: number;
  /**
   * The identify tally: users who got identify calls of more than one messageId (one emission each),
   * summed beyond the first: emitted twice by audiences, which is exactly-once. A call delivered twice
   * (one messageId) is in `duplicated` only.
   */
  duplicateEmissions?: number;
  /** The longest gap between consecutive receiver arrivals of the scenario's events, and when it began (s from the start). */
  longestPause?: { ms: number; atSeconds: number };
}

export interface SettleOptions {
  scenario: string;
  load: Load;
  receiver: FaultReceiver;
  destinationId: string;
  /** The dead-letter topic; read from the beginning (started here, stopped before returning). */
  deadLetterTopic: string;
  /** The delivery topic: when given, its tasks for the destination are read too and duplicate tasks counted. */
  taskTopic?: string;
  /** The ingest topic (with `taskTopic`): read too, so that a task is a duplicate only beyond its event's copies there. */
  inputTopic?: string;
  /**
   * The first retry tier (with `taskTopic` and `inputTopic`), where fan-out writes the ranges of tasks
   * it held while delivery reported the destination refusing: those events have no task to wait for.
   */
  heldTopic?: string;
  brokers?: string;
  /** The pipeline's DELIVERY_TIMEOUT (default 5 s): an answer this late came after delivery gave up. */
  senderTimeoutMs?: number;
  /** When instances of the pipeline were frozen (SIGSTOP), for `resentAfterFreeze`. */
  frozenAt?: readonly number[];
  /** Where the scenario's records start (topicEnds(settleTopics(…)) before its load): earlier ones are not read. */
  from?: ReadonlyMap<string, bigint>;
  /** Bound on the wait for every acknowledged event to be accounted for. */
  timeoutMs?: number;
  /** Once accounted for, the receiver must stay quiet this long (late redeliveries are counted). */
  quietMs?: number;
  startedAt?: number;
}

/** delivery's default DELIVERY_TIMEOUT. */
const DELIVERY_TIMEOUT_MS = 5000;

/**
 * Per messageId, its accepted copies, the last one aside, that the receiver answered `timeoutMs` or
 * more after delivery started the request (to the second, so counted when possibly that late): a
 * copy sent after one of them is delivery's at-least-once after a timeout.
 */
function lateAnswers(receiver: FaultReceiver, timeoutMs: number): Map<string, number> {
  const copies = new Map<string, AcceptedCall[]>();
  for (const call of receiver.accepted) if (call.messageId) copies.set(call.messageId, [...(copies.get(call.messageId) ?? []), call]);
  const late = new Map<string, number>();
  for (const [id, calls] of copies) {
    const n = calls.slice(0, -1).filter((c) => c.sentAtSecond !== undefined && c.at - c.sentAtSecond * 1000 >= timeoutMs).length;
    if (n > 0) late.set(id, n);
  }
  return late;
}

/**
 * How long before a freeze a task may have been sent and still not be committed by the frozen
 * instance. Its answer, its retry record and its offset commit follow one another; on the two-core
 * test machine, starved by a three-broker cluster and eight services, a task whose first request
 * got its 503 270 ms before the freeze had neither record nor commit (the commits' interval is 20 ms).
 * Small beside the 14 s freeze: a copy sent during or after it (a resumed instance sending what is
 * no longer its own) is never excused.
 */
const FROZEN_WORK_MS = 2000;

/** The messageIds of requests the receiver got within FROZEN_WORK_MS before one of `frozenAt`. */
function sentJustBeforeFreeze(receiver: FaultReceiver, frozenAt: readonly number[] | undefined): Set<string> {
  const ids = new Set<string>();
  if (!frozenAt?.length) return ids;
  for (const r of receiver.log) if (r.messageId && frozenAt.some((f) => r.at <= f && r.at >= f - FROZEN_WORK_MS)) ids.add(r.messageId);
  return ids;
}

/** The topics settle() reads. */
export function settleTopics(o: Pick<SettleOptions, 'deadLetterTopic' | 'taskTopic' | 'inputTopic' | 'heldTopic'>): string[] {
  const withInput = o.taskTopic && o.inputTopic;
  return [o.deadLetterTopic, ...(o.taskTopic ? [o.taskTopic] : []), ...(withInput ? [o.inputTopic!] : []), ...(withInput && o.heldTopic ? [o.heldTopic] : [])];
}

/**
 * Waits (bounded) until every acknowledged event is delivered or dead-lettered and the receiver
 * has been quiet for a while, then counts. Never throws on loss: the tally says it, and the test asserts.
 */
export async function settle(o: SettleOptions): Promise<Tally> {
  const { load, receiver } = o;
  await load.done;
  const reader = await new TopicReader(settleTopics(o), o.brokers, o.from).start();
  const letters = new Map<string, string>();
  const readLetters = () => {
    for (const d of reader.values<DeadLetter>(o.deadLetterTopic, (d) => d.task.destinationId === o.destinationId)) {
      try { letters.set(JSON.parse(d.task.body).messageId, d.reason); } catch { /* not an event body */ }
    }
  };
  // Where each messageId's tasks are in the delivery topic and when fan-out made them
  // (`partition/offset@seconds`; only committed ones: the reader is read_committed).
  const tasks = new Map<string, string[]>();
  let tasksRead = 0;
  const readTasks = () => {
    if (!o.taskTopic) return;
    tasks.clear();
    tasksRead = 0;
    reader.values<DeliveryTask>(o.taskTopic, (t, r) => {
      if (t.destinationId !== o.destinationId) return false;
      tasks.set(t.messageId, [...(tasks.get(t.messageId) ?? []), `${r.partition}/${r.offset}@${((t.createdAt - startedAtOr(o.startedAt)) / 1000).toFixed(2)}s`]);
      tasksRead++;
      return false;
    });
  };
  // How many times each event of the scenario (the load's, and identify calls made for its users) is in the ingest topic.
  const copies = new Map<string, number>();
  const readInput = () => {
    if (!o.taskTopic || !o.inputTopic) return;
    copies.clear();
    reader.values<{ messageId?: unknown }>(o.inputTopic, (v) => {
      if (typeof v.messageId === 'string' && tasks.has(v.messageId)) copies.set(v.messageId, (copies.get(v.messageId) ?? 0) + 1);
      return false;
    });
  };
  // The events whose task fan-out held (a range of ingest offsets in the first retry tier): they
  // never get a task in the delivery topic, delivery reads them from the ingest topic.
  const held = new Set<string>();
  const readHeld = () => {
    if (!o.taskTopic || !o.inputTopic || !o.heldTopic) return;
    const offsets = new Set<string>();
    reader.values<DeferredRange>(o.heldTopic, (r) => {
      if (r.destinationId === o.destinationId && r.topic === o.inputTopic) for (const offset of r.heldOffsets ?? []) offsets.add(`${r.partition}/${offset}`);
      return false;
    });
    if (offsets.size === 0) return;
    reader.values<{ messageId?: unknown }>(o.inputTopic, (v, r) => {
      if (typeof v.messageId === 'string' && offsets.has(`${r.partition}/${r.offset}`)) held.add(v.messageId);
      return false;
    });
  };
  const missing = () => [...load.acked].filter((id) => receiver.deliveredCount(id) === 0 && !letters.has(id));
  // The task (or the held range) of every delivered event, and the event of every task, must have
  // been read before duplicates are counted, and no new task for a while.
  const tasksBehind = () => (o.taskTopic ? load.ids.filter((id) => receiver.deliveredCount(id) > 0 && !tasks.has(id) && !held.has(id)).length + (o.inputTopic ? [...tasks.keys()].filter((id) => !copies.has(id)).length : 0) : 0);
  const deadline = Date.now() + (o.timeoutMs ?? 120_000);
  const quietMs = o.quietMs ?? 3000;
  let tasksSeen = -1;
  let tasksSteadySince = Date.now();
  let progressAt = Date.now() + 30_000;
  try {
    for (;;) {
      readLetters();
      readTasks();
      readInput();
      readHeld();
      if (tasksRead !== tasksSeen) { tasksSeen = tasksRead; tasksSteadySince = Date.now(); }
      const open = missing().length;
      const quiet = Date.now() - receiver.lastActivity >= quietMs && Date.now() - tasksSteadySince >= quietMs;
      if ((open === 0 && quiet && tasksBehind() === 0) || Date.now() > deadline) break;
      if (Date.now() > progressAt) {
        progressAt = Date.now() + 30_000;
        console.log(`#   ${o.scenario}: still settling: ${open} acknowledged events neither delivered nor dead-lettered (e.g. ${missing().slice(0, 3).join(', ')}), receiver quiet for ${((Date.now() - receiver.lastActivity) / 1000).toFixed(0)} s${o.taskTopic ? `, ${tasksRead} tasks read, ${held.size} events held by fan-out, ${tasksBehind()} delivered events whose task (or tasks whose event) was not read yet` : ''}`);
      }
      await sleep(200);
    }
    readLetters();
    readTasks();
    readInput();
    readHeld();
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
  const twice = [...tasks].filter(([id, at]) => at.length > Math.max(1, copies.get(id) ?? 0)).map(([id]) => id);
  if (o.taskTopic) {
    tally.duplicateTasks = twice.length;
    if (o.inputTopic) tally.ingestDuplicates = [...copies.values()].filter((n) => n > 1).length;
    const lateness = lateAnswers(receiver, o.senderTimeoutMs ?? DELIVERY_TIMEOUT_MS);
    const beforeFreeze = sentJustBeforeFreeze(receiver, o.frozenAt);
    tally.redelivered = 0;
    tally.resentAfterTimeout = 0;
    if (o.frozenAt) tally.resentAfterFreeze = 0;
    for (const id of load.ids) {
      const extra = Math.max(0, receiver.deliveredCount(id) - Math.max(1, tasks.get(id)?.length ?? 0));
      const afterTimeout = Math.min(extra, lateness.get(id) ?? 0);
      tally.redelivered += extra;
      tally.resentAfterTimeout += afterTimeout;
      if (o.frozenAt && extra > afterTimeout && beforeFreeze.has(id)) tally.resentAfterFreeze! += 1;
    }
    const behind = tasksBehind();
    if (behind > 0) console.log(`#   ${o.scenario}: ${behind} delivered events whose task (or tasks whose event) the reader had not seen by the deadline`);
    tally.longestPause = longestPause(receiver, new Set(load.ids), startedAtOr(o.startedAt));
  }
  report(tally, load);
  if (tally.duplicated > 0 || tally.lost > 0 || twice.length > 0) {
    // The story of a few of them, for whoever has to find out why.
    // Re-sent by delivery first (more deliveries than tasks), then other duplicates (an event's copies).
    const resent = (id: string) => receiver.deliveredCount(id) > Math.max(1, tasks.get(id)?.length ?? 0);
    const acked = [...load.acked];
    const dup = [...acked.filter(resent).slice(0, 3), ...acked.filter((id) => receiver.deliveredCount(id) > 1 && !resent(id)).slice(0, 2)];
    if (twice.length) console.log(`#   tasks written more often than their event is in ${o.inputTopic ?? 'the ingest topic'} (partition/offset@made of each copy; the event's copies), e.g. ${twice.slice(0, 5).map((id) => `${id} at ${tasks.get(id)!.join(' and ')} (×${copies.get(id) ?? '?'})`).join(', ')}`);
    for (const id of [...dup, ...twice.slice(0, 3), ...tally.lostSample.slice(0, 3)]) {
      const t0 = startedAtOr(o.startedAt);
      console.log(`#   ${id}: ${receiver.log.filter((r) => r.messageId === id).map((r) => `${r.mode}@${((r.at - t0) / 1000).toFixed(2)}s`).join(' ')}; accepted ${receiver.accepted.filter((a) => a.messageId === id).map((a) => `${((a.at - t0) / 1000).toFixed(2)}s`).join(' ')}${o.taskTopic ? `; tasks ${tasks.get(id)?.join(' and ') ?? 'none read'}` : ''}${letters.has(id) ? `; dead letter ${letters.get(id)}` : ''}`);
    }
  }
  return tally;
}

const startedAtOr = (t: number | undefined) => t ?? 0;

export interface IdentifyOptions {
  scenario: string;
  load: Load;
  receiver: FaultReceiver;
  /** Events per user in the load: user u's are events u × perUser … u × perUser + perUser − 1. */
  perUser: number;
  /** The user of event i (as the load's shape gives it). */
  userOf: (i: number) => string;
  /** The audience's trait in the identify calls (`three_buys`). */
  trait: string;
  startedAt: number;
  /** As in settle(). */
  senderTimeoutMs?: number;
  /** As in settle(). */
  frozenAt?: readonly number[];
  /** Bound on the wait for every user's identify call (default 60 s). */
  timeoutMs?: number;
}

/**
 * The identify calls of an audience that every user enters on their `perUser`-th event, as a tally
 * of their own: every user whose events were all acknowledged gets exactly one identify call with
 * the trait `true` (missing ones are lost, extra ones duplicated).
 */
export async function settleIdentifies(o: IdentifyOptions): Promise<Tally> {
  const { load, receiver, perUser } = o;
  const users = new Set<string>();
  for (let u = 0; u * perUser + perUser - 1 < load.ids.length; u++) {
    if (Array.from({ length: perUser }, (_, k) => load.ids[u * perUser + k]!).every((id) => load.acked.has(id))) users.add(o.userOf(u * perUser));
  }
  const emissions = new Map<string, Set<string>>();
  const identifiesOf = () => {
    const byUser = new Map<string, number>();
    for (const a of receiver.accepted) {
      const traits = a.body.traits as Record<string, unknown> | undefined;
      if (a.body.type !== 'identify' || traits?.[o.trait] !== true) continue;
      const user = String(a.body.userId);
      byUser.set(user, (byUser.get(user) ?? 0) + 1);
      if (!emissions.has(user)) emissions.set(user, new Set());
      emissions.get(user)!.add(String(a.messageId));
    }
    return byUser;
  };
  const deadline = Date.now() + (o.timeoutMs ?? 60_000);
  while ([...users].some((u) => !identifiesOf().has(u)) && Date.now() < deadline) await sleep(200);
  await sleep(2000);
  const byUser = identifiesOf();
  const missing = [...users].filter((u) => !byUser.has(u));
  const lateness = lateAnswers(receiver, o.senderTimeoutMs ?? DELIVERY_TIMEOUT_MS);
  const beforeFreeze = sentJustBeforeFreeze(receiver, o.frozenAt);
  let resentAfterTimeout = 0;
  let resentAfterFreeze = 0;
  for (const ids of emissions.values()) {
    for (const id of ids) {
      const extra = Math.max(0, receiver.deliveredCount(id) - 1);
      const afterTimeout = Math.min(extra, lateness.get(id) ?? 0);
      resentAfterTimeout += afterTimeout;
      if (extra > afterTimeout && beforeFreeze.has(id)) resentAfterFreeze++;
    }
  }
  const tally: Tally = {
    scenario: `${o.scenario}: audience identify calls`, sent: users.size, acknowledged: users.size, delivered: users.size - missing.length,
    duplicated: [...byUser.values()].reduce((s, n) => s + n - 1, 0), deadLettered: 0, lost: missing.length, lostSample: missing.slice(0, 10), deadLetterReasons: {}, seconds: (Date.now() - o.startedAt) / 1000,
    duplicateEmissions: [...emissions.values()].reduce((s, ids) => s + ids.size - 1, 0), resentAfterTimeout,
    ...(o.frozenAt ? { resentAfterFreeze } : {}),
  };
  report(tally);
  const twice = [...byUser].filter(([, n]) => n > 1).map(([u]) => u);
  if (twice.length) console.log(`#   users with more than one identify call, e.g. ${twice.slice(0, 5).join(', ')}`);
  return tally;
}

/** The longest gap between consecutive arrivals (any request, any answer) of the given messageIds at the receiver. */
export function longestPause(receiver: FaultReceiver, ids: Set<string>, t0: number): { ms: number; atSeconds: number } {
  const at = receiver.log.filter((r) => r.messageId !== undefined && ids.has(r.messageId)).map((r) => r.at).sort((a, b) => a - b);
  let best = { ms: 0, atSeconds: 0 };
  for (let i = 1; i < at.length; i++) if (at[i]! - at[i - 1]! > best.ms) best = { ms: at[i]! - at[i - 1]!, atSeconds: (at[i - 1]! - t0) / 1000 };
  return best;
}

/** The RELIABILITY.md table row, and the details behind it. */
export function report(t: Tally, load?: Load): void {
  const pct = t.acknowledged ? ((t.duplicated / t.acknowledged) * 100).toFixed(2) : '0.00';
  // The cluster suite's rows have two more columns: duplicate tasks and the longest pause in deliveries.
  const more = t.duplicateTasks === undefined ? '' : ` ${t.duplicateTasks} | ${((t.longestPause?.ms ?? 0) / 1000).toFixed(1)} s |`;
  console.log(`# reliability-row | ${t.scenario} | ${t.sent} | ${t.acknowledged} | ${t.delivered} | ${t.duplicated} (${pct} %) | ${t.deadLettered} | ${t.lost} |${more}`);
  const statuses = load ? JSON.stringify(Object.fromEntries(load.statuses)) : '';
  console.log(`#   ${t.scenario}: ${t.seconds.toFixed(0)} s; ingest answers ${statuses}, ${load?.retries ?? 0} client retries, ${load?.givenUp.size ?? 0} given up, ${load?.rejected.size ?? 0} rejected; dead-letter reasons ${JSON.stringify(t.deadLetterReasons)}${t.ingestDuplicates !== undefined ? `; in the ingest topic twice ${t.ingestDuplicates}` : ''}${t.redelivered !== undefined ? `; re-sent by delivery ${t.redelivered}` : ''}${!t.resentAfterTimeout ? '' : t.redelivered !== undefined ? ` (${t.resentAfterTimeout} after an answer that came past delivery's timeout)` : `; ${t.resentAfterTimeout} re-sent after an answer that came past delivery's timeout`}${t.resentAfterFreeze === undefined ? '' : `; ${t.resentAfterFreeze} re-sent after a copy just before a freeze`}${t.duplicateEmissions !== undefined ? `; emitted more than once ${t.duplicateEmissions}` : ''}${t.longestPause ? `; longest pause in deliveries ${t.longestPause.ms} ms from ${t.longestPause.atSeconds.toFixed(1)} s` : ''}${t.lost ? `; lost e.g. ${t.lostSample.join(', ')}` : ''}`);
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
