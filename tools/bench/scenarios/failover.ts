// Failover: what a broker lost and a rollout cost the events flowing. A three-node KRaft cluster of
// its own (tools/stack/fault-cluster.ts: topics at replication factor 3, min.insync.replicas 2),
// two instances of ingest, fan-out, delivery and audiences and one of control, and a steady load
// (batches of 10 calls, round robin over the ingest instances, a refused request sent again to the
// next: steady-load.ts) while, in turn: the broker leading most partitions of the ingest and
// delivery topics, other than the active controller, is SIGKILLed; that broker is started again
// (it catches up, and leadership of its preferred partitions moves back to it); the active KRaft
// controller is SIGKILLed; every service is restarted one instance at a time as a Deployment with
// maxSurge 1 and maxUnavailable 0 rolls (the replacement ready, then SIGTERM of the old one). Each
// reports the longest gap between two deliveries, when the controller fenced the killed broker, the
// longest wait for one answer of ingest and for an acknowledgement, lost events, tasks written to
// the delivery topic more often than their event is in the ingest topic, and deliveries re-sent.
// The schema registry is the run's own (on its one-broker stack): the faults are Kafka's and the
// services'. The controller's node is started again after its phase, outside what is measured.
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { groupIds } from '@switchyard/platform/kafka/groups';
import { ensureArtifacts } from '../../stack/artifacts.js';
import { FaultCluster } from '../../stack/fault-cluster.js';
import { basicAuth } from '../chain.js';
import { log, type BenchContext } from '../context.js';
import { median } from '../load.js';
import { benchCodec, makeDestination, makeSource, Pipeline, rawKafka, type Service, type StackRef } from '../pipeline.js';
import type { BenchReceiver } from '../receiver.js';
import { round, type Row } from '../report.js';
import { parseServiceLogLine } from '../service-stats.js';
import { SteadyLoad } from '../steady-load.js';

/** Targets: the longest gap and the longest wait for ingest after a broker or controller kill or a broker's return, and the longest gap of a rollout. */
export const KILL_GAP_S = 12;
export const ROLLOUT_GAP_S = 2;
/** Deliveries re-sent (delivery is at-least-once), at most this share of those delivered. */
export const RESENT_SHARE = 0.01;
/**
 * The brokers' session timeout (broker.session.timeout.ms: how long the controller waits for a
 * heartbeat before it fences a broker and moves its partitions), and a heartbeat a quarter of it
 * (at most Kafka's 2 s). Kafka's default, 9 s, is the floor of a gap after a kill, and after the
 * active controller's kill it starts only once a new controller is active (2-4 s here), so the
 * controller row cannot meet 12 s with it; 6 s is what a deployment that wants failover within
 * 12 s sets (deploy/README.md). FAILOVER_BROKER_SESSION_MS=9000 measures Kafka's default.
 */
const BROKER_SESSION_MS = Number(process.env.FAILOVER_BROKER_SESSION_MS ?? 6000);
const SCALED = ['ingest', 'fanout', 'delivery', 'audiences'] as const;
const INSTANCES = 2;
/** How long a stopping instance may take before SIGKILL: the manifests' terminationGracePeriodSeconds (deploy/base). */
const GRACE_S: Record<(typeof SCALED)[number] | 'control', number> = { ingest: 40, control: 30, fanout: 45, delivery: 60, audiences: 45 };
const BATCH = 10;

type Fault = 'leader' | 'return' | 'controller' | 'rollout';
const FAULTS: Fault[] = ['leader', 'return', 'controller', 'rollout'];
const TITLES: Record<Fault, string> = {
  leader: 'SIGKILL of the broker leading most partitions',
  return: 'the killed broker started again',
  controller: 'SIGKILL of the active KRaft controller',
  rollout: 'rolling restart of every service, one instance at a time',
};

interface Phase {
  fault: Fault;
  /** What was done, for the log and the notes. */
  did: string;
  gapMs: number;
  /** Seconds after the fault the longest gap began (negative: before it). */
  gapFromS: number;
  /** The longest gap before the fault: the steady state's own. */
  gapBeforeMs: number;
  answerMaxMs: number;
  ackMaxMs: number;
  /** The longest time between two acknowledgements of ingest (ms), and when it began (s after the fault). */
  ackGapMs: number;
  ackGapFromS: number;
  /** When the controller fenced the killed broker (s after the fault): the cluster's part of a gap. */
  fencedS: number;
  sent: number;
  /** Acknowledged and never delivered. */
  lost: number;
  /** Calls never acknowledged: given up after 120 s of re-sends, or refused with a 4xx (the load's fault). */
  unacknowledged: number;
  duplicateTasks: number;
  /** Events in the ingest topic twice: a batch written, then refused by ingest's timeout, sent again (at-least-once at the API). */
  ingestTwice: number;
  /** Deliveries beyond the first (delivery is at-least-once). */
  resent: number;
  resends: number;
  statuses: string;
}

export async function failover(ctx: BenchContext): Promise<Row[]> {
  const { s, serviceEnv, runId } = ctx;
  const dir = mkdtempSync(join(tmpdir(), 'switchyard-bench-failover-'));
  const { kafkaLibs } = await ensureArtifacts({ log });
  log(`failover: a three-node cluster (broker.session.timeout.ms ${BROKER_SESSION_MS}), ${INSTANCES} instances of ${SCALED.join(', ')}, ${s.failoverCallsPerS} calls/s for ${s.failoverSeconds} s a phase, the fault at ${s.failoverFaultAtS} s; ${s.failoverRounds} round(s)`);
  const cluster = await FaultCluster.start({ libs: kafkaLibs, dir, heap: '512m', properties: [`broker.session.timeout.ms=${BROKER_SESSION_MS}`, `broker.heartbeat.interval.ms=${Math.min(2000, BROKER_SESSION_MS / 4)}`] });
  const ref: StackRef = { ...ctx.ref, brokers: cluster.brokers, security: undefined };
  const p = new Pipeline(ref, `${ctx.base}failover.`, { ...serviceEnv, SWITCHYARD_REPLICATION_FACTOR: '3', SWITCHYARD_ADMIN_TOKEN: randomBytes(24).toString('base64url') }, ctx.code);
  const phases: Phase[] = [];
  try {
    await p.setup();
    const r = await ctx.receiver();
    const src = makeSource();
    await p.writeConfig([src], [makeDestination(src.id, [r.url])]);
    await Promise.all([...SCALED.map((name) => p.scale(name, INSTANCES)), p.start('control')]);
    for (let k = 0; k < s.failoverRounds; k++) {
      for (const fault of FAULTS) phases.push(await phase(ctx, cluster, p, r, src, fault, `${runId}-fo${k}-${fault}`));
    }
  } finally {
    await p.stopAll();
    await cluster.close();
    rmSync(dir, { recursive: true, force: true });
  }
  return FAULTS.flatMap((fault) => rows(ctx, phases.filter((x) => x.fault === fault)));
}

async function phase(ctx: BenchContext, cluster: FaultCluster, p: Pipeline, r: BenchReceiver, src: { writeKeys: string[] }, fault: Fault, label: string): Promise<Phase> {
  const { s } = ctx;
  const groups = groupIds(p.prefix);
  const down = () => cluster.nodeIds.filter((id) => !cluster.up.includes(id));
  // The return phase starts with the leader phase's node still down: starting it is its fault.
  if (fault !== 'return') {
    await Promise.all(down().map((id) => cluster.restart(id)));
    await cluster.waitForFullIsr();
  }
  await p.waitForGroup(groups.fanout, INSTANCES, p.topics.ingest);
  await p.waitForGroup(groups.delivery, INSTANCES, p.topics.delivery);
  r.reset();
  const logged = new Map(p.services.map((x) => [x, x.proc.output.length]));
  const load = new SteadyLoad({ targets: () => p.instances('ingest').map((x) => x.url), headers: basicAuth(src), callsPerS: s.failoverCallsPerS, batchSize: BATCH, runId: ctx.runId, label }).start();
  const t0 = Date.now();
  await sleep(s.failoverFaultAtS * 1000);
  const faultAt = Date.now();
  let did: string;
  let killed: number | undefined;
  if (fault === 'leader') {
    // Not the active controller: its kill is the next phase's (fencing then waits for a new controller).
    const controller = cluster.activeController()?.id;
    const { id, counts } = await cluster.busiestLeader([p.topics.ingest, p.topics.delivery], controller === undefined ? [] : [controller]);
    killed = id;
    await cluster.kill(id);
    did = `node ${id} killed (not the controller, node ${controller}; leading ${[...counts].map(([n, c]) => `${c} on node ${n}`).join(', ')} of the ingest and delivery partitions)`;
  } else if (fault === 'return') {
    const ids = down();
    await Promise.all(ids.map((id) => cluster.restart(id)));
    did = ids.length ? `node ${ids.join(', ')} started again, up after ${round((Date.now() - faultAt) / 1000, 1)} s` : 'no node was down';
  } else if (fault === 'controller') {
    const active = cluster.activeController();
    if (!active) throw new Error('failover: no active controller in the nodes\' logs');
    killed = active.id;
    await cluster.kill(active.id);
    const next = await cluster.newController(active, 30_000);
    did = `node ${active.id} killed (controller epoch ${active.epoch}); ${next ? `node ${next.id} active after ${round((Date.now() - faultAt) / 1000, 1)} s` : 'no new controller within 30 s'}`;
  } else {
    const exits: Array<number | string> = [];
    // When each old instance got its SIGTERM (s after the rollout began): where a gap falls says which handover it was.
    const stopped: string[] = [];
    for (const name of [...SCALED, 'control'] as const) {
      for (const old of p.instances(name)) {
        const exit = await p.replace(old, { graceMs: GRACE_S[name] * 1000, onStopping: () => stopped.push(`${name} ${round((Date.now() - faultAt) / 1000, 1)}`) });
        if (exit !== 0) log(`  ${label}: ${name} ${old.url} did not stop gracefully (${exit}); its last lines:\n${old.proc.output.slice(-8).join('\n')}`);
        exits.push(exit);
      }
    }
    did = `every instance replaced in ${round((Date.now() - faultAt) / 1000, 1)} s (SIGTERM at ${stopped.join(', ')} s), exits ${[...new Set(exits)].join(',')}`;
  }
  await sleep(Math.max(0, t0 + s.failoverSeconds * 1000 - Date.now()));
  await load.stop();
  const acked = [...load.acked.keys()];
  const arrived = await r.waitForAll(acked, s.deliverTimeoutMs).then(() => true, () => false);
  const times = acked.flatMap((id) => { const at = r.arrivals.get(id); return at === undefined ? [] : [at]; }).sort((a, b) => a - b);
  const longest = longestGap(times);
  const before = longestGap(times.filter((t) => t < faultAt));
  const ackGap = longestGap([...new Set(load.acked.values())].sort((a, b) => a - b));
  const fencedAt = killed === undefined ? undefined : cluster.fencedAt(killed, faultAt);
  // The controller's node back, so the copies are read from a whole cluster (not measured); the
  // leader's comes back as the next phase's fault.
  if (fault !== 'leader') await Promise.all(down().map((id) => cluster.restart(id)));
  const copies = await countCopies(p.stack, p.topics, new Set(load.ids));
  const x: Phase = {
    fault, did, gapMs: longest.ms, gapFromS: (longest.from - faultAt) / 1000, gapBeforeMs: before.ms, answerMaxMs: load.answerMaxMs, ackMaxMs: load.ackMaxMs,
    ackGapMs: ackGap.ms, ackGapFromS: (ackGap.from - faultAt) / 1000, fencedS: fencedAt === undefined ? NaN : (fencedAt - faultAt) / 1000,
    sent: load.ids.length, lost: acked.length - times.length, unacknowledged: load.givenUp + load.rejected,
    duplicateTasks: [...copies.tasks].filter(([id, n]) => n > Math.max(1, copies.events.get(id) ?? 0)).length,
    ingestTwice: [...copies.events.values()].filter((n) => n > 1).length,
    resent: r.duplicates(), resends: load.resends, statuses: [...load.statuses].map(([k, v]) => `${k}:${v}`).join(' '),
  };
  if (!arrived) log(`  ${label}: ${acked.length - times.length} acknowledged events not delivered within ${s.deliverTimeoutMs} ms`);
  if (fault !== 'rollout') log(`  ${label}: what the services logged after the fault (first time, s after it; count):\n${warningTimeline(logged, faultAt).join('\n')}`);
  log(`  ${label}: ${did}; longest gap ${round(x.gapMs)} ms from ${round(x.gapFromS, 1)} s after the fault (before it ${round(x.gapBeforeMs)} ms), ${Number.isNaN(x.fencedS) ? '' : `broker fenced ${round(x.fencedS, 1)} s after it; `}longest gap between ingest's acknowledgements ${round(x.ackGapMs)} ms from ${round(x.ackGapFromS, 1)} s; longest answer ${round(x.answerMaxMs)} ms, acknowledgement ${round(x.ackMaxMs)} ms; ${x.sent} sent, ${x.unacknowledged} never acknowledged, ${x.lost} lost, ${x.duplicateTasks} duplicate tasks, ${x.ingestTwice} in the ingest topic twice, ${x.resent} re-sent by delivery, ${x.resends} client re-sends (${x.statuses})`);
  return x;
}

/**
 * The services' log lines (warn and above at the bench's LOG_LEVEL) since `logged`, by service and
 * message: when each was first seen after `faultAt`, and how often. What took the time of a gap.
 */
function warningTimeline(logged: Map<Service, number>, faultAt: number): string[] {
  const seen = new Map<string, { at: number; n: number }>();
  for (const [x, from] of logged) {
    for (const line of x.proc.output.slice(from)) {
      const { key: said, at } = parseServiceLogLine(line);
      if (Number.isNaN(at)) continue;
      const key = `${x.name} ${x.url.slice(x.url.lastIndexOf(':') + 1)}: ${said.slice(0, 160)}`;
      const e = seen.get(key);
      if (e) e.n++; else seen.set(key, { at, n: 1 });
    }
  }
  return [...seen].filter(([, e]) => e.at >= faultAt - 500).sort((a, b) => a[1].at - b[1].at).slice(0, 60).map(([k, e]) => `    ${round((e.at - faultAt) / 1000, 1)} s ×${e.n} ${k}`);
}

/** The longest time between two consecutive sorted times, and where it began. */
function longestGap(times: number[]): { ms: number; from: number } {
  let best = { ms: 0, from: times[0] ?? 0 };
  for (let i = 1; i < times.length; i++) if (times[i]! - times[i - 1]! > best.ms) best = { ms: times[i]! - times[i - 1]!, from: times[i - 1]! };
  return best;
}

/**
 * How often each event of `ids` is in the ingest topic and has a task in the delivery topic (read
 * committed, from the start; the pipeline's own topics), read until every event's task is there and
 * nothing new came for 2 s, or 60 s.
 */
async function countCopies(stack: StackRef, topics: { ingest: string; delivery: string }, ids: Set<string>): Promise<{ events: Map<string, number>; tasks: Map<string, number> }> {
  const codec = benchCodec(stack);
  const consumer = rawKafka(stack, 'bench-copies').consumer({ groupId: `bench-copies-${randomUUID()}`, maxWaitTimeInMs: 200 });
  const events = new Map<string, number>();
  const tasks = new Map<string, number>();
  let lastAt = Date.now();
  await consumer.connect();
  try {
    await consumer.subscribe({ topics: [topics.ingest, topics.delivery], fromBeginning: true });
    await consumer.run({
      eachMessage: async ({ topic, message }) => {
        lastAt = Date.now();
        const messageId = ((await codec.decode(message.value)).value as { messageId?: unknown }).messageId;
        if (typeof messageId !== 'string' || !ids.has(messageId)) return;
        const m = topic === topics.delivery ? tasks : events;
        m.set(messageId, (m.get(messageId) ?? 0) + 1);
      },
    });
    const deadline = Date.now() + 60_000;
    while (Date.now() < deadline && !(tasks.size >= ids.size && Date.now() - lastAt > 2000)) await sleep(200);
  } finally {
    await consumer.disconnect();
  }
  return { events, tasks };
}

/** A fault's rows: the longest gap (the worst round), and for the kills the longest wait for ingest. */
function rows(ctx: BenchContext, ps: Phase[]): Row[] {
  if (!ps.length) return [];
  const fault = ps[0]!.fault;
  const target = fault === 'rollout' ? ROLLOUT_GAP_S : KILL_GAP_S;
  const gap = Math.max(...ps.map((x) => x.gapMs)) / 1000;
  const resentShare = ps.reduce((a, x) => a + x.resent, 0) / Math.max(1, ps.reduce((a, x) => a + x.sent - x.unacknowledged - x.lost, 0));
  const clean = ps.every((x) => x.lost === 0 && x.unacknowledged === 0 && x.duplicateTasks === 0) && resentShare <= RESENT_SHARE;
  const list = (f: (x: Phase) => number, d = 1) => ps.map((x) => round(f(x), d)).join('/');
  const details = {
    rounds: ps.length, gapS: list((x) => x.gapMs / 1000), gapFromFaultS: list((x) => x.gapFromS), gapBeforeFaultMs: list((x) => x.gapBeforeMs, 0),
    ...(fault === 'leader' || fault === 'controller' ? { fencedAfterS: list((x) => x.fencedS) } : {}), ackGapS: list((x) => x.ackGapMs / 1000), ackGapFromFaultS: list((x) => x.ackGapFromS),
    answerMaxS: list((x) => x.answerMaxMs / 1000), ackMaxS: list((x) => x.ackMaxMs / 1000),
    sent: ps.reduce((a, x) => a + x.sent, 0), unacknowledged: ps.reduce((a, x) => a + x.unacknowledged, 0), lost: ps.reduce((a, x) => a + x.lost, 0), duplicateTasks: ps.reduce((a, x) => a + x.duplicateTasks, 0),
    ingestTwice: ps.reduce((a, x) => a + x.ingestTwice, 0), resentByDelivery: ps.reduce((a, x) => a + x.resent, 0), resentShare: round(resentShare, 4), clientResends: ps.reduce((a, x) => a + x.resends, 0),
    _did: ps.map((x) => x.did), _statuses: ps.map((x) => x.statuses),
  };
  const gapRow: Row = {
    scenario: `failover: ${TITLES[fault]}, longest gap in deliveries`, value: gap, unit: 's',
    baseline: { name: 'before the fault', value: median(ps.map((x) => x.gapBeforeMs)) / 1000 }, ratio: gap / target,
    target: `≤ ${target} s, 0 lost, 0 duplicate tasks, re-sent ≤ ${RESENT_SHARE * 100} %`, met: gap <= target && clean, verified: ps.every((x) => x.lost === 0 && x.unacknowledged === 0),
    details: { ...details, note: `the worst of ${ps.length} round(s); ratio: ÷ the target; ${ctx.s.failoverCallsPerS} calls/s; broker.session.timeout.ms ${BROKER_SESSION_MS}` }, rssMb: {},
  };
  if (fault === 'rollout') return [gapRow];
  const wait = Math.max(...ps.map((x) => x.answerMaxMs)) / 1000;
  return [gapRow, {
    scenario: `failover: ${TITLES[fault]}, longest wait for ingest's answer`, value: wait, unit: 's', ratio: wait / KILL_GAP_S,
    target: `≤ ${KILL_GAP_S} s`, met: wait <= KILL_GAP_S, verified: ps.every((x) => x.lost === 0 && x.unacknowledged === 0),
    details: { answerMaxS: details.answerMaxS, ackMaxS: details.ackMaxS, clientResends: details.clientResends, statuses: ps.map((x) => x.statuses).join(' | '), note: 'one answer, any status; ackMaxS: a batch\'s first send to its 2xx, re-sends included; ratio: ÷ the target' }, rssMb: {},
  }];
}
