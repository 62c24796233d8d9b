// npm run bench [-- --quick | --tiny] [--only a,b] [--task-hops] [--profile] [--out FILE]: measures Switchyard against baselines taken in
// the same run on the same machine and prints a table of ratios (and writes it as JSON under
// bench-results/). Uses KAFKA_BROKERS / SCHEMA_REGISTRY_URL when both are set, else starts a fresh
// broker and registry in a temporary directory (as `npm test` does). Everything listens on
// 127.0.0.1; every load is bounded; every scenario checks that each sent event arrived, by messageId.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { randomUUID } from 'node:crypto';
import { repoRoot } from '../stack/paths.js';
import { freeKafkaAddresses, freePort } from '../stack/ports.js';
import { startStack, type Stack } from '../stack/stack.js';
import type { Source } from '@switchyard/platform/config-view/config-state';
import { log, type BenchContext } from './context.js';
import { HopWatcher, summariseHops } from './hops.js';
import { batchRequests, median, quantile, runLoad } from './load.js';
import { cpuMs, makeDestination, makeSource, Pipeline, rawKafka, rssMb, startBareIngest, type StackRef } from './pipeline.js';
import { parseOptions, type Scenario } from './options.js';
import { summariseDir } from './profile.js';
import { countArrived, startBenchReceiver, type BenchReceiver } from './receiver.js';
import { formatTable, hop, round, type Row } from './report.js';
import { backlogMemory } from './scenarios/backlog.js';
import { kafkaBaseline } from './scenarios/baseline-kafka.js';
import { measurePost, postRow, type PostRun, type PostSummary } from './scenarios/baseline-post.js';
import { deliveryCpu } from './scenarios/delivery-cpu.js';
import { horizontal } from './scenarios/horizontal.js';
import { scrapeStats, scrapeSums, statsNote } from './service-stats.js';
import { SIZES, type Sizes } from './sizes.js';

/** Extra environment of every service process (e.g. NODE_OPTIONS for --profile). */
const serviceEnv: NodeJS.ProcessEnv = {};
/** --task-hops: the latency rows also read the delivery topic and split fan-out → delivery (hops.ts). It costs the bench CPU. */
let taskHops = false;
/** The Kafka processes this run started (none on a reused stack), whose CPU some rows report. */
const brokerPids: number[] = [];
/** Warm-up loads stop once one is no more than this much faster than the one before... */
const WARM_STEADY = 0.05;
/** ...or after this many. */
const WARM_MAX_LOADS = 6;
/** Latency rows at this rate and above run `rounds` loads; the slower ones are long enough alone (60 s at 5/s). */
const LATENCY_ROUNDS_FROM_RATE = 500;

async function main(): Promise<void> {
  const { mode, only, out, profile, taskHops: withTaskHops } = parseOptions(process.argv.slice(2));
  // --profile: every service process writes a V8 CPU profile on exit (tools/bench/cpu-profile-hook.mjs); summarised after the table.
  const profileDir = profile ? join(repoRoot, 'bench-results', `profiles-${new Date().toISOString().replace(/[:.]/g, '-')}`) : undefined;
  if (profileDir) { mkdirSync(profileDir, { recursive: true }); serviceEnv.NODE_OPTIONS = `${process.env.NODE_OPTIONS ?? ''} --import ${join(repoRoot, 'tools', 'bench', 'cpu-profile-hook.mjs')}`.trim(); serviceEnv.BENCH_PROFILE_DIR = profileDir; }
  taskHops = withTaskHops;
  const sizes = SIZES[mode];
  const t0 = Date.now();
  const runId = randomUUID().slice(0, 8);
  log(`mode ${mode}, run ${runId}`);

  let stack: Stack | undefined;
  let tmp: string | undefined;
  if (!(process.env.KAFKA_BROKERS && process.env.SCHEMA_REGISTRY_URL)) {
    tmp = mkdtempSync(join(tmpdir(), 'switchyard-bench-'));
    log('KAFKA_BROKERS / SCHEMA_REGISTRY_URL not set: starting a broker and registry');
    stack = await startStack({ dir: tmp, kafka: await freeKafkaAddresses(1), registryPort: await freePort(), log });
    brokerPids.push(...stack.kafka.map((k) => k.pid));
  }
  const ref: StackRef = { brokers: stack?.brokers ?? process.env.KAFKA_BROKERS!, registryUrl: stack?.registryUrl ?? process.env.SCHEMA_REGISTRY_URL! };
  const cleanups: Array<() => Promise<unknown>> = [];
  let rows: Row[] = [];
  let failed: unknown;
  try {
    rows = await runAll(ref, sizes, runId, only, cleanups);
  } catch (err) {
    failed = err;
  } finally {
    for (const c of cleanups.reverse()) await c().catch((e) => log(`cleanup: ${(e as Error).message}`));
    await stack?.stop();
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  }
  if (failed) { console.error(failed); process.exitCode = 1; if (!rows.length) return; }

  const seconds = (Date.now() - t0) / 1000;
  const result = {
    mode, runId, startedAt: new Date(t0).toISOString(), seconds: round(seconds, 1),
    machine: { cpus: cpus().length, cpuModel: cpus()[0]?.model, memoryGb: round(totalmem() / 2 ** 30, 1), node: process.version, platform: `${process.platform} ${process.arch}` },
    stack: { brokers: ref.brokers, registryUrl: ref.registryUrl, reused: !stack },
    rows,
  };
  console.log(formatTable(rows));
  console.log(`\n${mode} run in ${seconds.toFixed(1)} s on ${result.machine.cpus} × ${result.machine.cpuModel}, Node ${process.version}`);
  const file = out ?? join(repoRoot, 'bench-results', `${new Date(t0).toISOString().replace(/[:.]/g, '-')}-${mode}.json`);
  mkdirSync(join(file, '..'), { recursive: true });
  writeFileSync(file, `${JSON.stringify(result, null, 2)}\n`);
  console.log(`written to ${file}`);
  if (profileDir) console.log(`\nCPU profiles (${profileDir}):\n${summariseDir(profileDir)}`);
  const unverified = rows.filter((r) => !r.verified);
  if (unverified.length) { console.error(`NOT VERIFIED (events missing): ${unverified.map((r) => r.scenario).join(', ')}`); process.exitCode = 1; }
}

async function runAll(ref: StackRef, s: Sizes, runId: string, only: Set<Scenario>, cleanups: Array<() => Promise<unknown>>): Promise<Row[]> {
  const rows: Row[] = [];
  const base = `bench.${runId}.`;
  // The latency load runs at half the saturation rate, so it needs the saturation run.
  if (only.has('latency')) only.add('e2e');
  const needsChain = ['e2e', 'attempts', 'latency', 'storm', 'isolation'].some((x) => only.has(x as Scenario));
  // P1: ingest → fanout → delivery. Short retry tiers and breaker so the retry storm drains in
  // bench time; everything else at its defaults.
  const p1 = new Pipeline(ref, `${base}main.`, { ...serviceEnv, SWITCHYARD_PARTITIONS: '3', SWITCHYARD_RETRY_TIERS: '1s,2s', DELIVERY_BREAKER_OPEN: '2s' });
  // P2: one partition, delivery only, for the slow receiver.
  const p2 = new Pipeline(ref, `${base}slow.`, { ...serviceEnv, SWITCHYARD_PARTITIONS: '1', SWITCHYARD_RETRY_TIERS: '1s,2s', DELIVERY_MAX_IN_FLIGHT_PER_DESTINATION: String(s.slowCap) });
  cleanups.push(() => p1.stopAll(), () => p2.stopAll());
  const receivers: BenchReceiver[] = [];
  cleanups.push(() => Promise.all(receivers.map((r) => r.close())));
  const receiver = async (...a: Parameters<typeof startBenchReceiver>) => { const r = await startBenchReceiver(...a); receivers.push(r); return r; };
  const ctx: BenchContext = { ref, s, runId, base, serviceEnv, taskHops, brokerPids, receiver, cleanups };

  log('setup: topics and schemas');
  await Promise.all([p1.setup(), p2.setup()]);
  const rMain = await receiver();
  const rAlone = await receiver();
  const rBeside = await receiver();
  const rHang = await receiver({ hang: true });
  const rDuo = await receiver();
  const rDuoOther = await receiver();
  const rStorm = await receiver({ status: 503 });
  const rSlow = await receiver({ delayMs: 200 });
  const sIngest = makeSource();
  const sMain = makeSource();
  const sAlone = makeSource();
  const sPair = makeSource();
  const sDuo = makeSource();
  const sStorm = makeSource();
  const dMain = makeDestination(sMain.id, [rMain.url]);
  const dAlone = makeDestination(sAlone.id, [rAlone.url]);
  const dBeside = makeDestination(sPair.id, [rBeside.url]);
  const dHang = makeDestination(sPair.id, [rHang.url]);
  const dDuo = makeDestination(sDuo.id, [rDuo.url]);
  const dDuoOther = makeDestination(sDuo.id, [rDuoOther.url]);
  const dStorm = makeDestination(sStorm.id, [rStorm.url]);
  await p1.writeConfig([sIngest, sMain, sAlone, sPair, sDuo, sStorm], [dMain, dAlone, dBeside, dHang, dDuo, dDuoOther, dStorm]);
  const slowSource = makeSource();
  const dSlow = makeDestination(slowSource.id, [rSlow.url]);
  await p2.writeConfig([slowSource], [dSlow]);

  const ingestP = only.has('ingest') || needsChain ? p1.start('ingest') : undefined;
  const rss = () => Object.fromEntries([...p1.services, ...p2.services].map((x) => [x.name === 'delivery' && x.proc.child.pid === p2Delivery?.proc.child.pid ? 'delivery(slow)' : x.name, rssMb(x.proc.child.pid)]));
  let p2Delivery: Awaited<ReturnType<Pipeline['start']>> | undefined;
  const basicAuth = (src: { writeKeys: string[] }) => ({ authorization: `Basic ${Buffer.from(`${src.writeKeys[0]}:`).toString('base64')}` });

  // ---- (a) raw kafkajs produce → consume of the same payloads on the same broker -----------------
  let minAB = NaN;
  let aRate = NaN;
  /** Baseline (b): requests/s and the bench process's CPU per request (undici client and node:http receiver, one process). */
  let rawPost: PostSummary | undefined;
  if (only.has('e2e')) {
    const a = await kafkaBaseline(ctx);
    rows.push(a.row);
    aRate = a.rate;
  }
  // Without the end-to-end row (which measures it in rounds beside each of its own), once here.
  if (only.has('cpu') && !only.has('e2e')) {
    const b = postRow(ctx, [await measurePost(ctx, rMain, '')]);
    rows.push(b.row);
    rawPost = b.summary;
  }

  // ---- (c) bare node:http → Kafka, and ingest under the same load, in paired rounds --------------
  const admin = rawKafka(ref, 'bench-admin').admin();
  await admin.connect();
  cleanups.push(() => admin.disconnect());
  const count = async (topic: string) => (await admin.fetchTopicOffsets(topic)).reduce((n, p) => n + Number(p.high), 0);
  const ingestLoad = (origin: string, label: string) => runLoad({ origin, path: '/v1/batch', headers: basicAuth(sIngest), requests: batchRequests(runId, label, s.ingestRequests, s.batchSize), concurrency: s.ingestConcurrency });
  if (only.has('ingest')) {
    await admin.createTopics({ topics: [{ topic: `${base}bare`, numPartitions: 3 }], waitForLeaders: true });
    const bare = await startBareIngest(ref, `${base}bare`, sIngest.writeKeys[0]!);
    cleanups.push(() => bare.stop());
    const ingest = await ingestP!;
    // Warm-ups (JIT, connections) — not measured.
    await ingestLoad(bare.url, 'warm-c');
    await ingestLoad(ingest.url, 'warm-i');
    const cEvents = s.ingestRequests * s.batchSize;
    /** One measured load; verified by the topic's record count growing by exactly the events sent. */
    const measure = async (origin: string, topic: string, label: string) => {
      const before = await count(topic);
      const res = await ingestLoad(origin, label);
      return { res, rate: cEvents / ((res.endedAt - res.startedAt) / 1000), verified: (await count(topic)) - before === cEvents && res.errors === 0 };
    };
    log(`baseline (c) and ingest only, ${s.rounds} paired round(s): ${s.ingestRequests} × ${s.batchSize} events, concurrency ${s.ingestConcurrency}`);
    const rounds: Array<{ c: Awaited<ReturnType<typeof measure>>; i: Awaited<ReturnType<typeof measure>> }> = [];
    for (let k = 0; k < s.rounds; k++) {
      // Alternate which goes first, so a drift in the machine's speed does not favour either side.
      const cFirst = k % 2 === 0;
      const first = await (cFirst ? measure(bare.url, `${base}bare`, `bare${k}`) : measure(ingest.url, p1.topics.ingest, `ingest${k}`));
      const second = await (cFirst ? measure(ingest.url, p1.topics.ingest, `ingest${k}`) : measure(bare.url, `${base}bare`, `bare${k}`));
      rounds.push(cFirst ? { c: first, i: second } : { c: second, i: first });
    }
    const bareRss = rssMb(bare.child.pid);
    await bare.stop();
    const ratios = rounds.map((r) => r.i.rate / r.c.rate);
    const ratio = median(ratios);
    const cRate = median(rounds.map((r) => r.c.rate));
    const cAll = rounds.map((r) => r.c.res.latencies).flat();
    rows.push({ scenario: 'baseline (c) bare http→Kafka', value: cRate, unit: 'events/s', verified: rounds.every((r) => r.c.verified), details: { p50ms: quantile(cAll, 0.5), p99ms: quantile(cAll, 0.99), rss: bareRss }, rssMb: {} });
    const iAll = rounds.map((r) => r.i.res.latencies).flat();
    const firstError = rounds.find((r) => r.i.res.firstError)?.i.res.firstError;
    rows.push({
      scenario: 'ingest only', value: median(rounds.map((r) => r.i.rate)), unit: 'events/s', baseline: { name: '(c)', value: cRate }, ratio, target: '≥ 0.8', met: ratio >= 0.8, verified: rounds.every((r) => r.i.verified),
      details: { p50ms: quantile(iAll, 0.5), p99ms: quantile(iAll, 0.99), roundRatios: ratios.map((x) => round(x, 2)).join('/'), benchCpu: rounds[0]!.i.res.cpuMs / (rounds[0]!.i.res.endedAt - rounds[0]!.i.res.startedAt), ...(firstError ? { error: firstError } : {}) }, rssMb: rss(),
    });
  }
  if (!needsChain && !only.has('slow') && !only.has('backlog') && !only.has('cpu')) {
    if (only.has('horizontal')) rows.push(...await horizontal(ctx));
    return rows;
  }

  const ingest = needsChain ? await ingestP! : undefined;
  if (ingest) {
    log('starting fanout and delivery');
    await Promise.all([p1.start('fanout'), p1.start('delivery')]);
  }

  /**
   * A closed-loop saturation load from one source through the whole chain: the rate at which events
   * reached `r` (first request to last arrival). Waits for `alsoAt` too, so no work of this load is
   * left to slow the next; `ok` only when every event arrived and no request failed.
   */
  const saturate = async (src: Source, r: BenchReceiver, label: string, events: number, alsoAt: BenchReceiver[] = []) => {
    const reqs = batchRequests(runId, label, Math.ceil(events / s.batchSize), s.batchSize);
    const ids = reqs.flatMap((x) => x.ids);
    const cpu0 = process.cpuUsage();
    const serviceCpu0 = p1.services.map((x) => cpuMs(x.proc.child.pid));
    const brokerCpu0 = brokerPids.reduce((a, pid) => a + cpuMs(pid), 0);
    const res = await runLoad({ origin: ingest!.url, path: '/v1/batch', headers: basicAuth(src), requests: reqs, concurrency: s.ingestConcurrency });
    const ok = await Promise.all([r, ...alsoAt].map((x) => x.waitForAll(ids, s.deliverTimeoutMs))).then(() => res.errors === 0, () => false);
    const cpu = process.cpuUsage(cpu0);
    // Each service's CPU per event over the load (µs): what a rate is bought with, steadier than rates on a shared machine.
    // The broker's too, when this run started it (none on a reused stack).
    const cpuPerEvent = Object.fromEntries([
      ...p1.services.map((x, i) => [`${x.name}CpuUs`, ((cpuMs(x.proc.child.pid) - serviceCpu0[i]!) * 1000) / ids.length] as const),
      ...(brokerPids.length ? [['brokerCpuUs', ((brokerPids.reduce((a, pid) => a + cpuMs(pid), 0) - brokerCpu0) * 1000) / ids.length] as const] : []),
    ]);
    const last = Math.max(...ids.map((id) => r.arrivals.get(id) ?? 0));
    const result = { rate: countArrived(ids, r.arrivals) / ((last - res.startedAt) / 1000), ok, events: ids.length, duplicates: r.duplicates(), ingestAcceptedPerS: ids.length / ((res.endedAt - res.startedAt) / 1000), benchCpu: (cpu.user + cpu.system) / 1000 / (last - res.startedAt), cpuPerEvent };
    for (const x of [r, ...alsoAt]) x.reset();
    return result;
  };

  /**
   * An open-loop load at a fixed rate from one source: end-to-end latency per event = arrival at `r`
   * − the moment the generator got ingest's 200 for the request carrying it (one process, one clock),
   * and where that time went, hop by hop (hops.ts). Low rates send one call per request, as
   * browsers and unbatched clients do; higher rates batch so the generator keeps its pace.
   */
  const paced = async (src: Source, r: BenchReceiver, label: string, events: number, ratePerS: number) => {
    const batchSize = ratePerS < 100 ? 1 : ratePerS < 1000 ? 5 : s.batchSize;
    const reqs = batchRequests(runId, label, Math.ceil(events / batchSize), batchSize);
    const ids = reqs.flatMap((x) => x.ids);
    const watcher = await new HopWatcher(ref, p1.topics.deliveryAttempts, taskHops ? p1.topics.delivery : undefined).start();
    const statsOf = () => Promise.all(p1.services.map((x) => scrapeStats(x.url)));
    const stats0 = await statsOf();
    // The bench's own event loop: it takes the acknowledgements and the arrivals, so its lag is in both.
    const benchLoop = monitorEventLoopDelay({ resolution: 1 });
    benchLoop.enable();
    try {
      const res = await runLoad({ origin: ingest!.url, path: '/v1/batch', headers: basicAuth(src), requests: reqs, concurrency: s.ingestConcurrency * 4, intervalMs: (1000 * batchSize) / ratePerS });
      const ok = await r.waitForAll(ids, s.deliverTimeoutMs).then(() => res.errors === 0, () => false);
      const stats1 = await statsOf();
      await watcher.waitFor(ids, 5000);
      const latencies = ids.flatMap((id) => { const at = r.arrivals.get(id); const ack = res.acks.get(id); return at !== undefined && ack !== undefined ? [Math.max(0, at - ack)] : []; });
      const last = Math.max(...ids.map((id) => r.arrivals.get(id) ?? 0));
      const result = {
        ok, batchSize, offered: ids.length / ((res.endedAt - res.startedAt) / 1000), delivered: countArrived(ids, r.arrivals) / ((last - res.startedAt) / 1000),
        latencies, p50ms: quantile(latencies, 0.5), p99ms: quantile(latencies, 0.99), p999ms: quantile(latencies, 0.999), ingestP99ms: quantile(res.latencies, 0.99),
        hops: summariseHops(ids, res.acks, r.arrivals, watcher.times),
        services: Object.fromEntries(p1.services.map((x, i) => [x.name, statsNote(stats0[i]!, stats1[i]!)])),
        benchLoopMs: `${round(benchLoop.percentile(50) / 1e6, 1)}/${round(benchLoop.percentile(99) / 1e6, 1)}/${round(benchLoop.max / 1e6, 1)}`,
      };
      r.reset();
      return result;
    } finally {
      benchLoop.disable();
      await watcher.stop();
    }
  };

  // Warm-up through the whole chain, not measured: saturation loads of a measured round's size until
  // one is within WARM_STEADY of the one before (at most WARM_MAX_LOADS). One load was not enough:
  // seven measured rounds after it ran at 5 892, 6 986, 7 860, 7 557, 7 957, 7 776 and 7 949/s
  // (session 14), still rising for two. Four at most were not enough either: 6 059, 7 301, 8 493,
  // 9 266/s, then rounds of 9 160, 9 732 and 10 139/s (session 15). What warms: the services' JIT
  // and heaps, delivery's connections, the fresh broker's JIT.
  const warmRates: number[] = [];
  if (ingest) {
    for (let k = 0; k < WARM_MAX_LOADS; k++) {
      warmRates.push((await saturate(sMain, rMain, `warm-e2e${k}`, s.e2eEvents)).rate);
      const [prev, last] = warmRates.slice(-2);
      if (prev !== undefined && last! <= prev * (1 + WARM_STEADY)) break;
    }
    log(`warm-up: ${warmRates.map((r) => round(r)).join(', ')} delivered/s`);
  }

  // ---- end to end at saturation --------------------------------------------------------------
  // In paired rounds with baseline (b), back to back, the order alternating (as ingest and (c)): a
  // single (b) taken minutes before the chain's rounds compared two different moments of a machine
  // whose speed drifts by a third or more (delivery's CPU per task 60–78 µs in one session's runs).
  let eRate = NaN;
  if (only.has('e2e')) {
    log(`end to end at saturation, ${s.rounds} round(s) paired with baseline (b): ${s.e2eEvents} events each`);
    const runs: Array<Awaited<ReturnType<typeof saturate>>> = [];
    const posts: PostRun[] = [];
    for (let k = 0; k < s.rounds; k++) {
      if (k % 2 === 0) posts.push(await measurePost(ctx, rMain, ` (round ${k + 1})`));
      runs.push(await saturate(sMain, rMain, `e2e${k}`, s.e2eEvents));
      if (k % 2 === 1) posts.push(await measurePost(ctx, rMain, ` (round ${k + 1})`));
    }
    const b = postRow(ctx, posts);
    rows.push(b.row);
    rawPost = b.summary;
    minAB = Math.min(aRate, rawPost.rate);
    eRate = median(runs.map((e) => e.rate));
    const ratios = runs.map((e, k) => e.rate / Math.min(aRate, posts[k]!.rate));
    const ratio = median(ratios);
    const e = runs.find((x) => x.rate === eRate) ?? runs[0]!;
    rows.push({
      scenario: 'end to end at saturation', value: eRate, unit: 'delivered/s', baseline: { name: 'min((a),(b))', value: minAB }, ratio, target: '≥ 0.5', met: ratio >= 0.5, verified: runs.every((x) => x.ok),
      details: { events: e.events, roundRates: runs.map((x) => round(x.rate)).join('/'), roundRatios: ratios.map((x) => round(x, 2)).join('/'), warmUpRates: warmRates.map((x) => round(x)).join('/'), ingestAcceptedPerS: e.ingestAcceptedPerS, duplicates: runs.reduce((n, x) => n + x.duplicates, 0), benchCpu: e.benchCpu, ...e.cpuPerEvent }, rssMb: rss(),
    });
  }

  // ---- the delivery-attempts topic: the same saturation load with attempt recording off and on ---
  // Each round restarts fan-out and delivery with fan-out's trace record and delivery's attempt
  // records off, warms them and measures, and the same with the defaults (on); the order alternates.
  if (only.has('attempts')) {
    const ratios: number[] = [];
    const offRates: number[] = [];
    const onRates: number[] = [];
    let ok = true;
    for (let k = 0; k < s.rounds; k++) {
      // Which goes first alternates, so a drift within a round does not favour either side.
      const offFirst = k % 2 === 0;
      log(`end to end, attempts topic ${offFirst ? 'off then on' : 'on then off'} (round ${k + 1}/${s.rounds}): ${s.e2eEvents} events each`);
      const measure = async (recording: boolean) => {
        const extra = recording ? [{}, {}] : [{ FANOUT_RECORD_TRACE: 'false' }, { DELIVERY_RECORD_ATTEMPTS: 'false' }];
        await Promise.all([p1.restart('fanout', extra[0]), p1.restart('delivery', extra[1])]);
        const label = `${recording ? 'on' : 'off'}${k}`;
        await saturate(sMain, rMain, `warm-${label}`, s.e2eEvents / 4);
        return saturate(sMain, rMain, `e2e-${label}`, s.e2eEvents);
      };
      const first = await measure(!offFirst);
      const second = await measure(offFirst);
      const [off, on] = offFirst ? [first, second] : [second, first];
      ratios.push(on.rate / off.rate);
      offRates.push(off.rate);
      onRates.push(on.rate);
      ok &&= on.ok && off.ok;
    }
    // Later rows need the defaults (the latency rows read the trace records): a round that ended with
    // recording off leaves fan-out and delivery running so.
    if (s.rounds % 2 === 0) await Promise.all([p1.restart('fanout'), p1.restart('delivery')]);
    const ratio = median(ratios);
    rows.push({
      scenario: 'end to end, attempts topic on vs off', value: median(onRates), unit: 'delivered/s', baseline: { name: 'off', value: median(offRates) }, ratio, target: '≥ 0.95', met: ratio >= 0.95, verified: ok,
      details: { events: s.e2eEvents, roundRatios: ratios.map((x) => round(x, 2)).join('/'), note: 'on = default; off = DELIVERY_RECORD_ATTEMPTS and FANOUT_RECORD_TRACE false; each after a restart and a warm-up' }, rssMb: rss(),
    });
  }

  // ---- end to end latency against rate: light, moderate, heavy, and 50 % of saturation ---------
  // The rows from 500/s up run in rounds: one load of 20 000 events at 4 000/s lasts 5 s, and a few
  // slow seconds made a whole run's p99 (session 15: 53/307 ms in one run, 26/96 in the next, same
  // code). The row reports the median round, by p99; the notes give every round and all rounds'
  // samples pooled (the first round, the step up from the rate before, is usually the slowest).
  if (only.has('latency')) {
    for (const { rate: wanted, events } of s.latencyRates) {
      const rate = wanted === 'half' ? eRate / 2 : wanted;
      const name = wanted === 'half' ? `50% of saturation (${round(rate)}/s)` : `${rate}/s`;
      const rounds = rate >= LATENCY_ROUNDS_FROM_RATE ? s.rounds : 1;
      log(`end to end latency at ${name}: ${rounds} round(s) of ${events} events`);
      const runs: Array<Awaited<ReturnType<typeof paced>>> = [];
      for (let k = 0; k < rounds; k++) runs.push(await paced(sMain, rMain, `lat${round(rate)}r${k}`, events, rate));
      const l = [...runs].sort((x, y) => x.p99ms - y.p99ms)[(runs.length - 1) >> 1]!;
      const pooled = runs.flatMap((x) => x.latencies);
      const h = l.hops;
      const met = l.p50ms <= 30 && l.p99ms <= 150;
      rows.push({
        scenario: `end to end latency at ${name}`, value: l.p99ms, unit: 'ms p99', target: 'p50 ≤ 30, p99 ≤ 150', met, verified: runs.every((x) => x.ok),
        details: {
          rate: l.offered, batch: l.batchSize, p50ms: l.p50ms, p99ms: l.p99ms, p999ms: l.p999ms, ingestP99ms: l.ingestP99ms,
          ...(rounds > 1 ? { roundP50P99: runs.map((x) => `${x.p50ms}/${x.p99ms}`).join(' '), pooledP50P99: `${quantile(pooled, 0.5)}/${quantile(pooled, 0.99)}` } : {}),
          // Each round's hops as p99 ms, ingest/→ fan-out/→ delivery/http: which hop holds the first
          // round's step up from the rate before.
          ...(rounds > 1 ? { roundHopP99: runs.map(({ hops: x }) => [x.ingest, x.toFanout, x.toDelivery, x.http].map((q) => round(q.p99)).join('/')).join(' ') } : {}),
          // Each hop as p50/p99 ms: ingest (receipt → 200), → fan-out (200 → tasks decided),
          // → delivery (decided → first request: transaction commit, fetch, dispatch), http (→ arrival).
          hopIngest: hop(h.ingest), hopFanout: hop(h.toFanout), hopDelivery: hop(h.toDelivery), hopHttp: hop(h.http), hopSamples: h.samples,
          // --task-hops: → delivery split into → produced (fan-out's work), → visible (transaction, markers, a fetch), → first request.
          ...(h.tasks ? { hopTaskProduced: hop(h.tasks.toProduce), hopTaskVisible: hop(h.tasks.toVisible), hopTaskDispatched: hop(h.tasks.toDispatch) } : {}),
          ...l.services, benchLoopMs: l.benchLoopMs,
        },
        rssMb: rss(),
      });
    }
  }

  // ---- retry storm: 503 for stormMs, then 200 -------------------------------------------------
  if (only.has('storm')) {
    log(`retry storm: ${s.stormEvents} events, 503 for ${s.stormMs} ms`);
    const stormReqs = batchRequests(runId, 'storm', Math.ceil(s.stormEvents / s.batchSize), s.batchSize);
    const stormIds = stormReqs.flatMap((x) => x.ids);
    const stormStart = Date.now();
    const st = await runLoad({ origin: ingest!.url, path: '/v1/batch', headers: basicAuth(sStorm), requests: stormReqs, concurrency: s.ingestConcurrency });
    await new Promise((r) => setTimeout(r, Math.max(0, stormStart + s.stormMs - Date.now())));
    const failedAttempts = rStorm.requests();
    rStorm.setMode({});
    const flip = Date.now();
    const stVerified = await rStorm.waitForAll(stormIds, s.deliverTimeoutMs).then(() => st.errors === 0, () => false);
    const drainMs = Math.max(...stormIds.map((id) => rStorm.arrivals.get(id) ?? Infinity)) - flip;
    rows.push({
      scenario: `retry storm (503 for ${s.stormMs / 1000} s)`, value: drainMs / 1000, unit: 's to drain', verified: stVerified,
      details: { events: stormIds.length, attemptsDuring503: failedAttempts, lost: stormIds.length - countArrived(stormIds, rStorm.arrivals), duplicates: rStorm.duplicates(), tiers: '1s,2s', breakerOpen: '2s' }, rssMb: rss(),
    });
  }

  // ---- slow receiver, one partition -----------------------------------------------------------
  if (only.has('slow')) {
    log(`slow receiver: ${s.slowTasks} tasks, cap ${s.slowCap}, 200 ms per response, one partition`);
    p2Delivery = await p2.start('delivery');
    const slowIds = Array.from({ length: s.slowTasks }, (_, k) => `${runId}-slow-${k}`);
    await p2.writeTasks(dSlow, slowIds);
    const slowStart = Date.now();
    const slowVerified = await rSlow.waitForAll(slowIds, s.deliverTimeoutMs).then(() => true, () => false);
    const slowFirst = Math.min(...slowIds.map((id) => rSlow.arrivals.get(id) ?? Infinity));
    const slowLast = Math.max(...slowIds.map((id) => rSlow.arrivals.get(id) ?? 0));
    // From the first answer to the last: each answer lands 200 ms after its request was sent, so
    // (n - cap) answers over (last - first) is the steady rate; cap / 0.2 s is the ceiling.
    const slowRate = (countArrived(slowIds, rSlow.arrivals) - s.slowCap) / ((slowLast - slowFirst) / 1000);
    const slowCeiling = s.slowCap / 0.2;
    rows.push({
      scenario: 'slow receiver (200 ms), 1 partition', value: slowRate, unit: 'delivered/s', baseline: { name: 'cap/0.2s', value: slowCeiling }, ratio: slowRate / slowCeiling, target: '≥ 0.9', met: slowRate / slowCeiling >= 0.9, verified: slowVerified,
      details: { tasks: s.slowTasks, cap: s.slowCap, wallS: (slowLast - slowStart) / 1000 }, rssMb: rss(),
    });
    await p2Delivery.stop();
    p2.services.splice(0);
  }

  // ---- isolation: healthy alone, beside a healthy neighbour, beside a timing-out one -------------
  if (only.has('isolation')) {
    // Production-like retry settings (first tier 10 s, breaker open 30 s): with the storm's 1 s / 2 s
    // tiers every hung task would cycle through Kafka every two seconds, a load no deployment
    // configures. Two tiers, because setup made two tier topics for this pipeline. Fan-out gets the
    // same tiers: it writes the ranges it holds due as delivery's first deferral.
    await Promise.all([p1.restart('fanout', { SWITCHYARD_RETRY_TIERS: '10s,1m' }), p1.restart('delivery', { SWITCHYARD_RETRY_TIERS: '10s,1m', DELIVERY_BREAKER_OPEN: '30s' })]);
    log(`isolation, ${s.rounds} round(s): ${s.isolationEvents} events to a healthy destination alone, beside a healthy one, beside a timing-out one`);
    await saturate(sAlone, rAlone, 'warm-alone', s.isolationEvents / 4); // the restarted delivery warms up first (JIT, connections)
    const alone: number[] = [];
    const duo: number[] = [];
    const hung: number[] = [];
    // Hung tasks of earlier rounds that fell due during a "beside" round and were deferred again
    // (first tier 10 s, so the tasks of round k come back during round k + 1): work on top of the round's own.
    const redeferred: number[] = [];
    // Each service's CPU per healthy event (µs), alone and beside: where the hung neighbour's tasks cost.
    const cpuAlone: Array<Record<string, number>> = [];
    const cpuBeside: Array<Record<string, number>> = [];
    const tier2Retries = async () => (await scrapeSums(p1.services.find((x) => x.name === 'delivery')!.url, ['delivery_retries_total{tier="2"}']))['delivery_retries_total{tier="2"}']!;
    // Tasks of the timing-out destination fan-out held (one range record per batch) rather than wrote.
    const heldByFanout = async () => (await scrapeSums(p1.services.find((x) => x.name === 'fanout')!.url, ['fanout_tasks_held_total']))['fanout_tasks_held_total']!;
    const held: number[] = [];
    let ok = true;
    for (let k = 0; k < s.rounds; k++) {
      const a = await saturate(sAlone, rAlone, `alone${k}`, s.isolationEvents);
      const d = await saturate(sDuo, rDuo, `duo${k}`, s.isolationEvents, [rDuoOther]);
      const [before, heldBefore] = [await tier2Retries(), await heldByFanout()];
      const h = await saturate(sPair, rBeside, `beside${k}`, s.isolationEvents);
      redeferred.push((await tier2Retries()) - before);
      held.push((await heldByFanout()) - heldBefore);
      alone.push(a.rate); duo.push(d.rate); hung.push(h.rate);
      cpuAlone.push(a.cpuPerEvent); cpuBeside.push(h.cpuPerEvent);
      ok &&= a.ok && d.ok && h.ok;
    }
    const vsAlone = median(hung.map((h, k) => h / alone[k]!));
    const vsDuo = median(hung.map((h, k) => h / duo[k]!));
    const settings = { timeout: '5s (default)', tiers: '10s,1m', breakerOpen: '30s' };
    rows.push({
      scenario: 'isolation: healthy beside timing-out', value: median(hung), unit: 'delivered/s', baseline: { name: 'alone', value: median(alone) }, ratio: vsAlone, target: '≥ 0.9', met: vsAlone >= 0.9, verified: ok,
      details: {
        events: s.isolationEvents, roundRatios: hung.map((h, k) => round(h / alone[k]!, 2)).join('/'),
        roundRates: hung.map((h, k) => `${round(alone[k]!)}/${round(duo[k]!)}/${round(h)}`).join(' '), redeferredDuringBeside: redeferred.join('/'), heldByFanoutDuringBeside: held.join('/'),
        hungRequests: rHang.requests(), ...settings,
        cpuUsAloneVsBeside: Object.keys(cpuAlone[0] ?? {}).map((k) => `${k.replace('CpuUs', '')} ${round(median(cpuAlone.map((c) => c[k]!)))}/${round(median(cpuBeside.map((c) => c[k]!)))}`).join(', '),
      },
      rssMb: rss(),
    });
    rows.push({
      scenario: 'isolation: beside timing-out vs beside healthy', value: median(hung), unit: 'delivered/s', baseline: { name: 'beside healthy', value: median(duo) }, ratio: vsDuo, target: '≥ 0.9', met: vsDuo >= 0.9, verified: ok,
      details: { roundRatios: hung.map((h, k) => round(h / duo[k]!, 2)).join('/'), duoVsAlone: round(median(duo.map((d, k) => d / alone[k]!)), 2), note: 'same task volume on both sides: what the hang itself costs' }, rssMb: {},
    });
    // Below saturation, where a deployment runs: the same offered rate (half the alone rate) to the
    // healthy destination alone, then beside the timing-out one; delivered rate and latency.
    const rate = median(alone) / 2;
    log(`isolation at 50% load: ${s.isolationEvents} events at ${round(rate)}/s, alone then beside the timing-out destination`);
    const pa = await paced(sAlone, rAlone, 'paced-alone', s.isolationEvents, rate);
    const ph = await paced(sPair, rBeside, 'paced-beside', s.isolationEvents, rate);
    rows.push({
      scenario: 'isolation at 50% load: beside timing-out', value: ph.delivered, unit: 'delivered/s', baseline: { name: 'alone', value: pa.delivered }, ratio: ph.delivered / pa.delivered, target: '≥ 0.9', met: ph.delivered / pa.delivered >= 0.9, verified: pa.ok && ph.ok,
      details: {
        offered: rate, p50ms: ph.p50ms, p99ms: ph.p99ms, aloneP50ms: pa.p50ms, aloneP99ms: pa.p99ms,
        // Per hop (p50/p99 ms, as in the latency rows), beside then alone: where the hung neighbour costs.
        hopIngest: `${hop(ph.hops.ingest)} vs ${hop(pa.hops.ingest)}`, hopFanout: `${hop(ph.hops.toFanout)} vs ${hop(pa.hops.toFanout)}`,
        hopDelivery: `${hop(ph.hops.toDelivery)} vs ${hop(pa.hops.toDelivery)}`, hopHttp: `${hop(ph.hops.http)} vs ${hop(pa.hops.http)}`,
      },
      rssMb: rss(),
    });
  }
  await p1.stopAll();

  if (only.has('cpu')) rows.push(await deliveryCpu(ctx, rawPost));
  if (only.has('horizontal')) rows.push(...await horizontal(ctx));
  if (only.has('backlog') && s.backlogTasks > 0) rows.push(await backlogMemory(ctx));
  return rows;
}

await main();
// Nothing of the run may keep the process alive (kafkajs and undici sockets are closed above; this
// guards against a stray timer turning a finished run into a hang).
process.exit();
