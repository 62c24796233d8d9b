// Horizontal throughput: 1, 2, 3 delivery instances against a slow receiver.
import { cpus, loadavg } from 'node:os';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import type { Destination } from '@switchyard/platform/config-view/config-state';
import { log, type BenchContext } from '../context.js';
import { machineCpuMs, processCpuMs } from '../cpu-time.js';
import { median } from '../load.js';
import { makeDestination, makeSource, Pipeline, rssMb } from '../pipeline.js';
import type { BenchReceiver } from '../receiver.js';
import { round, type Row } from '../report.js';
import { parseServiceLogLine, scrapeStats, scrapeSums } from '../service-stats.js';

/** The instance counts of the horizontal rows, and the delivery topic's partitions. */
const HORIZONTAL_COUNTS = [1, 2, 3];
const HORIZONTAL_PARTITIONS = 6;
const SLOW_RECEIVER_MS = 200;
const COUNTERS = ['delivery_tasks_delivered_total', 'delivery_attempts_total{status_class="skipped"}', 'delivery_attempts_total{status_class="timeout"}', 'delivery_attempts_total{status_class="error"}', 'delivery_request_seconds_sum', 'delivery_request_seconds_count'];

type Measure = {
  n: number; rate: number; drainRate: number; ok: boolean; duplicates: number; partitions: number[]; shares: number[];
  /** Tasks sent to a retry tier without a request (destination full and stalled), and failed requests. */
  deferred: number; timeouts: number; errors: number;
  /** What delivery logged (warn and above) during the drain: message (and error) → count. */
  warnings: Record<string, number>;
  /** Delivery's mean request time (ms), and the worst instance's event-loop lag p99 / max (ms). */
  requestMs: number; loopP99Ms: number; loopMaxMs: number;
  /** Requests in flight on average over the drain (Σ request time ÷ drain time) ÷ (N × cap): whether the slots stayed full. */
  slotFill: number;
  /** The bench process's own event-loop lag p99 and max (ms): the receiver's 200 ms timers fire this late. */
  benchLoopP99Ms: number; benchLoopMaxMs: number;
  /** The longest time between two arrivals during the drain (ms): a pause in deliveries. */
  gapMs: number;
  /** The machine's 1-minute load average after the drain (other work on the shared machine shows here). */
  load1: number;
  deliveryCores: number; brokerCores: number; benchCores: number; machineCores: number; stealCores: number; writeS: number; drainS: number; rss: Record<string, number>;
};

/**
 * Delivery alone against a receiver that answers every request after 200 ms, a 6-partition
 * delivery topic, and 1, 2 and 3 delivery instances (separate processes, one consumer group). Each
 * instance may hold `cap` requests in flight to the destination (DELIVERY_MAX_IN_FLIGHT_PER_DESTINATION,
 * per instance), so N instances can hold N × cap and the ceiling is N × cap ÷ 0.2 s; the target is
 * 0.9 of it. Per round and count: scale to N instances, wait until the group is Stable with each
 * member holding delivery partitions, warm up (3 × cap tasks per instance: JIT, connections), then
 * write a backlog of N × horizontalTasks tasks (written far faster than it drains, so every
 * instance's slots stay full) and time its drain. The rate is what arrived between the 10th and the
 * 90th percentile arrival times (all instances busy: no ramp-up, no tail where an instance whose
 * partitions ran dry waits for the others); the whole drain, (n − N × cap) ÷ (last − first arrival)
 * as the slow receiver row computes it, is in the notes. Rounds alternate the order (1, 2, 3 then
 * 3, 2, 1) so a drift in the machine's speed does not favour one count; each row reports the
 * median of its rounds.
 */
export async function horizontal(ctx: BenchContext): Promise<Row[]> {
  const { ref, s, serviceEnv } = ctx;
  const cap = s.slowCap;
  const prefix = `${ctx.base}horiz.`;
  const p = new Pipeline(ref, prefix, { ...serviceEnv, SWITCHYARD_PARTITIONS: String(HORIZONTAL_PARTITIONS), SWITCHYARD_RETRY_TIERS: '1s,2s', DELIVERY_MAX_IN_FLIGHT_PER_DESTINATION: String(cap) }, ctx.code);
  const results: Measure[][] = [];
  try {
    await p.setup();
    const r = await ctx.receiver({ delayMs: SLOW_RECEIVER_MS });
    const src = makeSource();
    const d = makeDestination(src.id, [r.url]);
    await p.writeConfig([src], [d]);
    log(`horizontal throughput, ${s.rounds} round(s): ${HORIZONTAL_COUNTS.join(', ')} delivery instances, ${HORIZONTAL_PARTITIONS} partitions, cap ${cap} per instance, ${SLOW_RECEIVER_MS} ms per response, ${s.horizontalTasks} tasks per instance`);
    for (let k = 0; k < s.rounds; k++) {
      const measures: Measure[] = [];
      for (const n of k % 2 === 0 ? HORIZONTAL_COUNTS : [...HORIZONTAL_COUNTS].reverse()) measures.push(await drain(ctx, p, r, d, k, n));
      results.push(measures);
    }
  } finally {
    await p.stopAll();
  }
  return HORIZONTAL_COUNTS.map((n) => row(ctx, results, n));
}

/** Round k with n instances: scale, warm up, write the backlog and time its drain. */
async function drain(ctx: BenchContext, p: Pipeline, r: BenchReceiver, d: Destination, k: number, n: number): Promise<Measure> {
  const { s, runId, brokerPids } = ctx;
  const cap = s.slowCap;
  const instances = await p.scale('delivery', n);
  const partitions = await p.waitForGroup(`${p.prefix}delivery`, n, p.topics.delivery);
  const warmIds = Array.from({ length: 3 * cap * n }, (_, j) => `${runId}-hz${k}-${n}-warm-${j}`);
  await p.writeTasks(d, warmIds);
  await r.waitForAll(warmIds, s.deliverTimeoutMs);
  r.reset();
  const ids = Array.from({ length: s.horizontalTasks * n }, (_, j) => `${runId}-hz${k}-${n}-${j}`);
  const pids = instances.map((x) => x.proc.child.pid);
  type Sample = { at: number; deliveryMs: number; brokerMs: number; benchMs: number; machine: { busyMs: number; stealMs: number } };
  const samples: Sample[] = [];
  const sample = () => {
    const c = process.cpuUsage();
    samples.push({ at: Date.now(), deliveryMs: pids.reduce((a: number, pid) => a + processCpuMs(pid), 0), brokerMs: brokerPids.reduce((a, pid) => a + processCpuMs(pid), 0), benchMs: (c.user + c.system) / 1000, machine: machineCpuMs() });
  };
  const before = await Promise.all(instances.map((x) => scrapeSums(x.url, COUNTERS)));
  await Promise.all(instances.map((x) => scrapeStats(x.url))); // resets the event-loop histograms
  const logged = instances.map((x) => x.proc.output.length);
  const benchLoop = monitorEventLoopDelay({ resolution: 10 });
  benchLoop.enable();
  sample();
  const timer = setInterval(sample, 100);
  const w0 = Date.now();
  let ok: boolean;
  let writeS: number;
  try {
    await p.writeTasks(d, ids);
    writeS = (Date.now() - w0) / 1000;
    ok = await r.waitForAll(ids, s.deliverTimeoutMs).then(() => true, () => false);
  } finally {
    clearInterval(timer);
    benchLoop.disable();
  }
  sample();
  // Every scrape resets the event-loop histogram: the one after the load comes first.
  const loops = await Promise.all(instances.map((x) => scrapeStats(x.url)));
  const after = await Promise.all(instances.map((x) => scrapeSums(x.url, COUNTERS)));
  const delta = (key: string) => after.reduce((a, x, i) => a + x[key]! - before[i]![key]!, 0);
  const times = ids.flatMap((id) => { const at = r.arrivals.get(id); return at === undefined ? [] : [at]; }).sort((a, b) => a - b);
  // Answers come in waves (a full set of slots answered 200 ms after it was sent), so the
  // window runs from one arrival time to another and counts what arrived in [tLo, tHi): whole
  // waves over whole periods, however the percentiles fall within a wave.
  const tLo = times[Math.floor(times.length * 0.1)] ?? NaN;
  const tHi = times[Math.max(0, Math.ceil(times.length * 0.9) - 1)] ?? NaN;
  const rate = (lowerBound(times, tHi) - lowerBound(times, tLo)) / ((tHi - tLo) / 1000);
  const first = times[0] ?? NaN;
  const last = times.at(-1) ?? NaN;
  const drainRate = (times.length - n * cap) / ((last - first) / 1000);
  // CPU over the same window, from the samples just before its start and just after its end.
  const from = samples.filter((x) => x.at <= tLo).at(-1) ?? samples[0]!;
  const to = samples.find((x) => x.at >= tHi) ?? samples.at(-1)!;
  const span = Math.max(1, to.at - from.at);
  const delivered = after.map((a, i) => a.delivery_tasks_delivered_total! - before[i]!.delivery_tasks_delivered_total!);
  const total = delivered.reduce((a, b) => a + b, 0);
  const m: Measure = {
    n, rate, drainRate, ok, duplicates: r.duplicates(), partitions, shares: delivered.map((x) => x / Math.max(1, total)),
    deferred: delta(COUNTERS[1]!), timeouts: delta(COUNTERS[2]!), errors: delta(COUNTERS[3]!), warnings: warningsSince(instances.map((x, i) => x.proc.output.slice(logged[i]))),
    requestMs: (delta('delivery_request_seconds_sum') * 1000) / delta('delivery_request_seconds_count'),
    slotFill: delta('delivery_request_seconds_sum') / ((last - w0) / 1000) / (n * cap), benchLoopP99Ms: benchLoop.percentile(99) / 1e6, benchLoopMaxMs: benchLoop.max / 1e6,
    gapMs: times.reduce((g, t, i) => (i ? Math.max(g, t - times[i - 1]!) : g), 0),
    loopP99Ms: Math.max(...loops.map((x) => x.loopP99Ms)), loopMaxMs: Math.max(...loops.map((x) => x.loopMaxMs)), load1: loadavg()[0]!,
    deliveryCores: (to.deliveryMs - from.deliveryMs) / span, brokerCores: (to.brokerMs - from.brokerMs) / span, benchCores: (to.benchMs - from.benchMs) / span,
    machineCores: (to.machine.busyMs - from.machine.busyMs) / span, stealCores: (to.machine.stealMs - from.machine.stealMs) / span,
    writeS, drainS: (last - w0) / 1000, rss: Object.fromEntries(pids.map((pid, i) => [`delivery${i + 1}`, rssMb(pid)])),
  };
  log(`  round ${k + 1}, ${n} instance(s): ${round(rate)} delivered/s (whole drain ${round(drainRate)}/s), ceiling ${n * cap / (SLOW_RECEIVER_MS / 1000)}/s; request ${round(m.requestMs)} ms, slots ${round(m.slotFill, 2)} full, bench loop p99/max ${round(m.benchLoopP99Ms)}/${round(m.benchLoopMaxMs)} ms, longest gap ${round(m.gapMs)} ms, deferred ${m.deferred}, timeouts ${m.timeouts}, errors ${m.errors}, loop p99/max ${round(m.loopP99Ms)}/${round(m.loopMaxMs)} ms; cores: delivery ${round(m.deliveryCores, 2)}, broker ${round(m.brokerCores, 2)}, bench ${round(m.benchCores, 2)}, machine ${round(m.machineCores, 2)} of ${cpus().length}, load ${round(m.load1, 1)}`);
  r.reset();
  return m;
}

/** The row of n instances: the median of its rounds. */
function row(ctx: BenchContext, results: Measure[][], n: number): Row {
  const { s } = ctx;
  const cap = s.slowCap;
  const of = (count: number) => results.map((measures) => measures.find((m) => m.n === count)!);
  const one = of(1);
  const ms = of(n);
  const rate = median(ms.map((m) => m.rate));
  const ceiling = (n * cap) / (SLOW_RECEIVER_MS / 1000);
  const mid = ms.find((m) => m.rate === rate) ?? ms[0]!;
  const list = (f: (m: Measure) => number, d = 0) => ms.map((m) => round(f(m), d)).join('/');
  return {
    scenario: `horizontal: ${n} delivery instance${n > 1 ? 's' : ''}, ${HORIZONTAL_PARTITIONS} partitions, ${SLOW_RECEIVER_MS} ms receiver`, value: rate, unit: 'delivered/s',
    baseline: { name: `${n}×cap/0.2s`, value: ceiling }, ratio: rate / ceiling, target: '≥ 0.9', met: rate / ceiling >= 0.9, verified: ms.every((m) => m.ok),
    details: {
      tasks: s.horizontalTasks * n, cap, roundRates: list((m) => m.rate), vsTarget: rate / (0.9 * ceiling),
      vs1: round(median(ms.map((m, k) => m.rate / one[k]!.rate)), 2), drainPerS: list((m) => m.drainRate),
      partitions: mid.partitions.join('+'), shares: mid.shares.map((x) => round(x, 2)).join('/'),
      deferred: list((m) => m.deferred), timeouts: ms.reduce((a, m) => a + m.timeouts, 0), errors: ms.reduce((a, m) => a + m.errors, 0), duplicates: ms.reduce((a, m) => a + m.duplicates, 0),
      requestMs: list((m) => m.requestMs), slotFill: list((m) => m.slotFill, 2), benchLoopP99Ms: list((m) => m.benchLoopP99Ms), benchLoopMaxMs: list((m) => m.benchLoopMaxMs), gapMs: list((m) => m.gapMs), loopP99Ms: list((m) => m.loopP99Ms), loopMaxMs: list((m) => m.loopMaxMs), load1: list((m) => m.load1, 1),
      // Cores busy over the measured window: delivery (all instances), the broker (when this run started it), the bench process (receiver), the whole machine.
      deliveryCores: list((m) => m.deliveryCores, 2), deliveryUsPerTask: list((m) => (m.deliveryCores * 1e6) / m.rate), brokerCores: list((m) => m.brokerCores, 2), benchCores: list((m) => m.benchCores, 2), machineCores: list((m) => m.machineCores, 2), stealCores: list((m) => m.stealCores, 2),
      writeS: round(mid.writeS, 1), drainS: round(mid.drainS, 1),
      _warnings: ms.map((m) => m.warnings),
    },
    rssMb: mid.rss,
  };
}

/** The first index of a sorted array whose value is ≥ x (its length if none). */
function lowerBound(sorted: number[], x: number): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) { const mid = (lo + hi) >> 1; if (sorted[mid]! < x) lo = mid + 1; else hi = mid; }
  return lo;
}

/**
 * Delivery's log lines (JSON, warn and above at the bench's LOG_LEVEL) counted by message and error;
 * the failed-attempt log's summary lines ("N more failed delivery attempts…") by their reasons.
 */
function warningsSince(outputs: string[][]): Record<string, number> {
  const counts: Record<string, number> = {};
  const add = (key: string, n = 1) => { counts[key] = (counts[key] ?? 0) + n; };
  for (const line of outputs.flat()) {
    const { key, byReason } = parseServiceLogLine(line);
    if (byReason) for (const [why, n] of Object.entries(byReason)) add(`not logged one by one: ${why}`, n);
    else add(key);
  }
  return counts;
}
