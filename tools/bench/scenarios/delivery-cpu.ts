// Delivery's CPU time per task, delivery alone (after the chain's pipelines stopped), against the
// receiver's per request, the least a bare undici client spends per request to the same receiver,
// and delivery against its bare parts: a bare kafkajs consume of the same tasks plus that client.
import { createInterface } from 'node:readline';
import { runBareDrain } from '../bare-drain.js';
import { log, type BenchContext } from '../context.js';
import { clkTck, processCpuMs } from '../cpu-time.js';
import { makeDestination, makeSource, Pipeline, rssMb, spawnBenchProgram } from '../pipeline.js';
import { countArrived, type BenchReceiver } from '../receiver.js';
import { round, type Row } from '../report.js';
import { scrapeStats } from '../service-stats.js';
import type { PostSummary } from './baseline-post.js';

/**
 * A backlog of warm-up + measured tasks written straight to the delivery topic (3 partitions, one
 * fast receiver), then delivery started alone. Its process CPU (/proc/<pid>/stat) and the arrivals
 * are sampled every 100 ms; the row is the CPU between the sample where the warm-up tasks had
 * arrived (start-up, JIT and connections excluded) and a sample taken 500 ms after the last arrival
 * (so commits and attempt-record flushes count), divided by the tasks that arrived in between. CPU
 * time per task holds steady on a shared machine where rates do not; the drain rate is reported
 * beside it, and baseline (b)'s figures when it ran.
 */
export async function deliveryCpu(ctx: BenchContext, rawPost: PostSummary | undefined): Promise<{ rows: Row[]; consumeUsPerTask: number; clientUsPerRequest: number; verified: boolean }> {
  const { ref, s, runId, serviceEnv } = ctx;
  const p = new Pipeline(ref, `${ctx.base}cpu.`, { ...serviceEnv, SWITCHYARD_PARTITIONS: '3', SWITCHYARD_RETRY_TIERS: '1s,2s' }, ctx.code);
  try {
    await p.setup();
    const r = await ctx.receiver();
    const src = makeSource();
    const d = makeDestination(src.id, [r.url]);
    await p.writeConfig([src], [d]);
    const warm = s.cpuWarmTasks;
    const ids = Array.from({ length: warm + s.cpuTasks }, (_, k) => `${runId}-cpu-${k}`);
    log(`delivery CPU per task: writing ${warm} + ${s.cpuTasks} tasks, then delivery alone`);
    await p.writeTasks(d, ids, 1000);
    const delivery = await p.start('delivery');
    const pid = delivery.proc.child.pid;
    const gcBefore = await scrapeStats(delivery.url);
    type Sample = { at: number; cpuMs: number; benchMs: number; arrived: number };
    const samples: Sample[] = [];
    const sample = () => { const c = process.cpuUsage(); samples.push({ at: Date.now(), cpuMs: processCpuMs(pid), benchMs: (c.user + c.system) / 1000, arrived: r.arrivals.size }); };
    sample();
    const timer = setInterval(sample, 100);
    let ok: boolean;
    try {
      ok = await r.waitForAll(ids, s.deliverTimeoutMs).then(() => true, () => false);
      await new Promise((res) => setTimeout(res, 500));
      sample();
    } finally {
      clearInterval(timer);
    }
    // If the warm-up and half the measured tasks went by within one sample (a tiny run), measure from the start.
    const first = samples.find((x) => x.arrived >= warm);
    const from = first && first.arrived <= warm + s.cpuTasks / 2 ? first : samples[0]!;
    const to = samples.at(-1)!;
    const tasks = to.arrived - from.arrived;
    const usPerTask = ((to.cpuMs - from.cpuMs) * 1000) / tasks;
    const lastArrival = Math.max(...ids.map((id) => r.arrivals.get(id) ?? 0));
    const receiverUsPerTask = ((to.benchMs - from.benchMs) * 1000) / tasks;
    // The window in thirds (by arrivals): a steady drain shows three close figures.
    const thirds = [1, 2, 3].map((k) => {
      const a = samples.find((x) => x.arrived >= from.arrived + ((k - 1) * tasks) / 3) ?? from;
      const b = k === 3 ? to : samples.find((x) => x.arrived >= from.arrived + (k * tasks) / 3) ?? to;
      return b.arrived > a.arrived ? round(((b.cpuMs - a.cpuMs) * 1000) / (b.arrived - a.arrived)) : NaN;
    });
    const deliveryRss = rssMb(pid);
    const gcAfter = await scrapeStats(delivery.url);
    // Over the whole drain (warm-up included): what the heap settings (the manifest's NODE_OPTIONS) cost.
    const gcUsPerTask = ((gcAfter.gcMs - gcBefore.gcMs) * 1000) / ids.length;
    const majorGcUsPerTask = ((gcAfter.majorGcMs - gcBefore.majorGcMs) * 1000) / ids.length;
    await delivery.stop();
    const floor = await bareClientFloor(ctx, r, DELIVERY_IN_FLIGHT_PER_DESTINATION);
    // The Kafka side of the floor: the same backlog read again by a bare consumer in a group of its own.
    log(`bare kafkajs consume: the same ${warm} + ${s.cpuTasks} tasks`);
    const consume = await runBareDrain('bare-consume.ts', { KAFKA_BROKERS: ref.brokers, BARE_TOPIC: p.topics.delivery, BARE_GROUP: `${ctx.base}cpu.bare-consume`, BARE_WARM: String(warm), BARE_RECORDS: String(ids.length) }, ids.length, s.deliverTimeoutMs);
    const partsUs = consume.usPerRecord + floor.clientUsPerRequest;
    const vsParts = usPerTask / partsUs;
    const vsReceiver = usPerTask / receiverUsPerTask;
    const cpuRow: Row = {
      scenario: 'delivery CPU per task (drain, delivery alone)', value: usPerTask, unit: 'µs/task', baseline: { name: 'receiver', value: receiverUsPerTask }, ratio: vsReceiver,
      target: '≤ 1.0 × receiver', met: vsReceiver <= 1.0,
      verified: ok && r.duplicates() === 0 && Number.isFinite(usPerTask),
      details: {
        tasks, warmTasks: warm, drainPerS: (ids.length - from.arrived) / Math.max(0.001, (lastArrival - from.at) / 1000), deliveryCores: (to.cpuMs - from.cpuMs) / Math.max(1, to.at - from.at),
        thirdsUs: thirds.join('/'), gcUsPerTask, majorGcUsPerTask, receiverUsPerTask,
        // The receiver's work per task never changes, so its CPU time per task tracks how slow the
        // shared machine is at the moment; delivery's cost in receiver units moves far less between runs.
        vsReceiver, vsBareClient: usPerTask / floor.clientUsPerRequest, duplicates: r.duplicates(),
        ...(rawPost ? { rawUndiciReqPerS: rawPost.rate, rawUndiciUsPerReq: rawPost.usPerRequest } : {}),
        clkTck: clkTck(),
      },
      rssMb: { delivery: deliveryRss },
    };
    const partsRow: Row = {
      scenario: 'delivery CPU per task vs bare consume + bare client', value: usPerTask, unit: 'µs/task', baseline: { name: 'bare parts', value: partsUs }, ratio: vsParts,
      target: '≤ 1.5 × bare parts', met: vsParts <= 1.5,
      verified: cpuRow.verified && floor.row.verified && consume.ok,
      details: { consumeUsPerTask: consume.usPerRecord, clientUsPerRequest: floor.clientUsPerRequest, consumePerS: consume.perS, tasks },
      rssMb: {},
    };
    return { rows: [cpuRow, floor.row, partsRow], consumeUsPerTask: consume.usPerRecord, clientUsPerRequest: floor.clientUsPerRequest, verified: partsRow.verified };
  } finally {
    await p.stopAll();
  }
}

/** Delivery's default DELIVERY_MAX_IN_FLIGHT_PER_DESTINATION: the bare client posts with as many at once. */
const DELIVERY_IN_FLIGHT_PER_DESTINATION = 200;

/**
 * The floor under delivery's figure: tools/bench/bare-webhook-client.ts, in its own process, posts
 * as many bodies of the same shape to the same receiver with as many requests in flight, through
 * undici's dispatch as delivery does, and nothing else (no Kafka, no signing, no bookkeeping). Its
 * own CPU per request after a warm-up, and the receiver's over the same requests.
 */
async function bareClientFloor(ctx: BenchContext, r: BenchReceiver, concurrency: number): Promise<{ row: Row; clientUsPerRequest: number }> {
  const { s, runId } = ctx;
  const prefix = `${runId}-bare`;
  log(`bare undici client: ${s.cpuWarmTasks} + ${s.cpuTasks} requests, ${concurrency} in flight`);
  const child = spawnBenchProgram('bare-webhook-client.ts', {
    BARE_URL: r.url, BARE_PREFIX: prefix, BARE_WARM: String(s.cpuWarmTasks), BARE_REQUESTS: String(s.cpuTasks), BARE_CONCURRENCY: String(concurrency),
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  let receiverFrom = 0;
  let result: { requests: number; failed: number; cpuUs: number; ms: number } | undefined;
  let receiverUs = NaN;
  for await (const line of createInterface({ input: child.stdout! })) {
    const now = process.cpuUsage();
    if (line === 'warm') receiverFrom = now.user + now.system;
    else if (line.startsWith('{')) { receiverUs = now.user + now.system - receiverFrom; result = JSON.parse(line) as typeof result; }
  }
  const code = await exited;
  const ids = Array.from({ length: s.cpuWarmTasks + s.cpuTasks }, (_, i) => `${prefix}-${i}`);
  const arrived = countArrived(ids, r.arrivals);
  const clientUsPerRequest = result ? result.cpuUs / result.requests : NaN;
  const receiverUsPerRequest = result ? receiverUs / result.requests : NaN;
  return {
    clientUsPerRequest,
    row: {
      scenario: 'bare undici client CPU per request (the floor)', value: clientUsPerRequest, unit: 'µs/req', baseline: { name: 'receiver', value: receiverUsPerRequest },
      ratio: clientUsPerRequest / receiverUsPerRequest,
      verified: code === 0 && result !== undefined && result.failed === 0 && arrived === ids.length && r.duplicates() === 0,
      details: { concurrency, requests: result?.requests ?? 0, reqPerS: result ? result.requests / (result.ms / 1000) : NaN, receiverUsPerRequest },
      rssMb: {},
    },
  };
}
