// The pipelines the chain scenarios share, and the two loads they measure with. P1 runs ingest →
// fan-out → delivery, with nine destinations of six sources for end to end, latency, the retry
// storm and isolation (beside a timing-out and beside a rate-limited destination); P2 runs
// delivery alone on one partition for the slow receiver.
import { monitorEventLoopDelay } from 'node:perf_hooks';
import type { Destination, Source } from '@switchyard/platform/config-view/config-state';
import { log, type BenchContext } from './context.js';
import { HopWatcher, summariseHops } from './hops.js';
import { batchRequests, quantile, runLoad, singleCallRequests } from './load.js';
import { makeDestination, makeSource, Pipeline, rssMb, type Service } from './pipeline.js';
import { countArrived, type BenchReceiver } from './receiver.js';
import { round } from './report.js';
import { scrapeStats, statsNote } from './service-stats.js';
import { processCpuMs } from './cpu-time.js';

/** The rate limit of the rate-limited destination (requests/s, summed over delivery instances). */
export const LIMITED_PER_S = 50;

/** Warm-up loads stop once one is no more than this much faster than the one before... */
const WARM_STEADY = 0.05;
/** ...or after this many. */
const WARM_MAX_LOADS = 6;

export const basicAuth = (src: { writeKeys: string[] }) => ({ authorization: `Basic ${Buffer.from(`${src.writeKeys[0]}:`).toString('base64')}` });

export type Saturation = Awaited<ReturnType<Chain['saturate']>>;
export type Paced = Awaited<ReturnType<Chain['paced']>>;

export class Chain {
  /** Short retry tiers and breaker so the retry storm drains in bench time; everything else at its defaults. */
  readonly p1: Pipeline;
  /** One partition, delivery only, for the slow receiver. */
  readonly p2: Pipeline;
  /** P2's delivery while the slow receiver runs (its RSS is reported as `delivery(slow)`). */
  p2Delivery: Service | undefined;
  /** P1's ingest once started; fan-out and delivery start with `startChain`. */
  ingest: Service | undefined;
  ingestStarting: Promise<Service> | undefined;
  /** The chain's warm-up rates (delivered/s), reported in the end-to-end row. */
  readonly warmRates: number[] = [];
  rMain!: BenchReceiver; rAlone!: BenchReceiver; rBeside!: BenchReceiver; rHang!: BenchReceiver;
  rDuo!: BenchReceiver; rDuoOther!: BenchReceiver; rStorm!: BenchReceiver; rSlow!: BenchReceiver;
  /** The healthy destination beside the rate-limited one, and the rate-limited one (both answer at once). */
  rNeighbour!: BenchReceiver; rLimited!: BenchReceiver;
  readonly sIngest = makeSource();
  readonly sMain = makeSource();
  readonly sAlone = makeSource();
  readonly sPair = makeSource();
  readonly sDuo = makeSource();
  readonly sStorm = makeSource();
  /** A healthy destination and one limited to LIMITED_PER_S. */
  readonly sLimited = makeSource();
  readonly slowSource = makeSource();
  dSlow!: Destination;
  /** P1's fan-out and delivery started with production-like retry settings (useProductionRetries); another restart replaces them. */
  private productionRetries: Service[] = [];

  constructor(private readonly ctx: BenchContext) {
    const { ref, base, serviceEnv, s } = ctx;
    this.p1 = new Pipeline(ref, `${base}main.`, { ...serviceEnv, SWITCHYARD_PARTITIONS: '3', SWITCHYARD_RETRY_TIERS: '1s,2s', DELIVERY_BREAKER_OPEN: '2s' }, ctx.code);
    this.p2 = new Pipeline(ref, `${base}slow.`, { ...serviceEnv, SWITCHYARD_PARTITIONS: '1', SWITCHYARD_RETRY_TIERS: '1s,2s', DELIVERY_MAX_IN_FLIGHT_PER_DESTINATION: String(s.slowCap) }, ctx.code);
  }

  /** Topics and schemas of both pipelines, the receivers, and the sources and destinations on the config topics. */
  async setup(): Promise<void> {
    const { p1, p2, ctx } = this;
    log('setup: topics and schemas');
    await Promise.all([p1.setup(), p2.setup()]);
    this.rMain = await ctx.receiver();
    this.rAlone = await ctx.receiver();
    this.rBeside = await ctx.receiver();
    this.rHang = await ctx.receiver({ hang: true });
    this.rDuo = await ctx.receiver();
    this.rDuoOther = await ctx.receiver();
    this.rStorm = await ctx.receiver({ status: 503 });
    this.rSlow = await ctx.receiver({ delayMs: 200 });
    this.rNeighbour = await ctx.receiver();
    this.rLimited = await ctx.receiver();
    const dMain = makeDestination(this.sMain.id, [this.rMain.url]);
    const dAlone = makeDestination(this.sAlone.id, [this.rAlone.url]);
    const dBeside = makeDestination(this.sPair.id, [this.rBeside.url]);
    const dHang = makeDestination(this.sPair.id, [this.rHang.url]);
    const dDuo = makeDestination(this.sDuo.id, [this.rDuo.url]);
    const dDuoOther = makeDestination(this.sDuo.id, [this.rDuoOther.url]);
    const dStorm = makeDestination(this.sStorm.id, [this.rStorm.url]);
    const dNeighbour = makeDestination(this.sLimited.id, [this.rNeighbour.url]);
    const dLimited = { ...makeDestination(this.sLimited.id, [this.rLimited.url]), rateLimit: { perSecond: LIMITED_PER_S } };
    await p1.writeConfig([this.sIngest, this.sMain, this.sAlone, this.sPair, this.sDuo, this.sStorm, this.sLimited], [dMain, dAlone, dBeside, dHang, dDuo, dDuoOther, dStorm, dNeighbour, dLimited]);
    this.dSlow = makeDestination(this.slowSource.id, [this.rSlow.url]);
    await p2.writeConfig([this.slowSource], [this.dSlow]);
  }

  /** Starts P1's ingest without waiting for it (the baselines run meanwhile). */
  startIngest(): void {
    this.ingestStarting = this.p1.start('ingest');
  }

  /** Every running service's RSS (MB), by name. */
  rss(): Record<string, number> {
    return Object.fromEntries([...this.p1.services, ...this.p2.services].map((x) => [x.name === 'delivery' && x.proc.child.pid === this.p2Delivery?.proc.child.pid ? 'delivery(slow)' : x.name, rssMb(x.proc.child.pid)]));
  }

  /** Waits for ingest, starts fan-out and delivery, and warms the whole chain. */
  async startChain(): Promise<void> {
    this.ingest = await this.ingestStarting!;
    log('starting fanout and delivery');
    await Promise.all([this.p1.start('fanout'), this.p1.start('delivery')]);
    await this.warmUp();
  }

  /**
   * Restarts P1's fan-out and delivery with production-like retry settings (first tier 10 s, breaker
   * open 30 s), unless they already run with them; true when it restarted them (they then need a warm-up).
   * With the storm's 1 s / 2 s tiers every hung or held task would cycle through Kafka every one or two
   * seconds, a load no deployment configures. Two tiers, because setup made two tier topics for this
   * pipeline. Fan-out gets the same tiers: it writes the ranges it holds due as delivery's first deferral.
   */
  async useProductionRetries(): Promise<boolean> {
    const running = [...this.p1.instances('fanout'), ...this.p1.instances('delivery')];
    if (this.productionRetries.length && running.length === this.productionRetries.length && running.every((x) => this.productionRetries.includes(x))) return false;
    this.productionRetries = await Promise.all([this.p1.restart('fanout', { SWITCHYARD_RETRY_TIERS: '10s,1m' }), this.p1.restart('delivery', { SWITCHYARD_RETRY_TIERS: '10s,1m', DELIVERY_BREAKER_OPEN: '30s' })]);
    return true;
  }

  /**
   * Warm-up through the whole chain, not measured: saturation loads of a measured round's size until
   * one is within WARM_STEADY of the one before (at most WARM_MAX_LOADS). One load was not enough:
   * seven measured rounds after it ran at 5 892, 6 986, 7 860, 7 557, 7 957, 7 776 and 7 949/s,
   * still rising for two. Four at most were not enough either: 6 059, 7 301, 8 493, 9 266/s, then
   * rounds of 9 160, 9 732 and 10 139/s. What warms: the services' JIT and heaps, delivery's
   * connections, the fresh broker's JIT.
   */
  private async warmUp(): Promise<void> {
    const { warmRates } = this;
    for (let k = 0; k < WARM_MAX_LOADS; k++) {
      warmRates.push((await this.saturate(this.sMain, this.rMain, `warm-e2e${k}`, this.ctx.s.e2eEvents)).rate);
      const [prev, last] = warmRates.slice(-2);
      if (prev !== undefined && last! <= prev * (1 + WARM_STEADY)) break;
    }
    log(`warm-up: ${warmRates.map((r) => round(r)).join(', ')} delivered/s`);
  }

  /**
   * A closed-loop saturation load from one source through the whole chain: the rate at which events
   * reached `r` (first request to last arrival). Waits for `alsoAt` too, so no work of this load is
   * left to slow the next; `ok` only when every event arrived and no request failed.
   */
  async saturate(src: Source, r: BenchReceiver, label: string, events: number, alsoAt: BenchReceiver[] = []) {
    const { s, runId, brokerPids } = this.ctx;
    const { p1 } = this;
    const reqs = batchRequests(runId, label, Math.ceil(events / s.batchSize), s.batchSize);
    const ids = reqs.flatMap((x) => x.ids);
    const cpu0 = process.cpuUsage();
    const serviceCpu0 = p1.services.map((x) => processCpuMs(x.proc.child.pid));
    const brokerCpu0 = brokerPids.reduce((a, pid) => a + processCpuMs(pid), 0);
    const res = await runLoad({ origin: this.ingest!.url, path: '/v1/batch', headers: basicAuth(src), requests: reqs, concurrency: s.ingestConcurrency });
    const ok = await Promise.all([r, ...alsoAt].map((x) => x.waitForAll(ids, s.deliverTimeoutMs))).then(() => res.errors === 0, () => false);
    const cpu = process.cpuUsage(cpu0);
    // Each service's CPU per event over the load (µs): what a rate is bought with, steadier than rates on a shared machine.
    // The broker's too, when this run started it (none on a reused stack).
    const cpuPerEvent = Object.fromEntries([
      ...p1.services.map((x, i) => [`${x.name}CpuUs`, ((processCpuMs(x.proc.child.pid) - serviceCpu0[i]!) * 1000) / ids.length] as const),
      ...(brokerPids.length ? [['brokerCpuUs', ((brokerPids.reduce((a, pid) => a + processCpuMs(pid), 0) - brokerCpu0) * 1000) / ids.length] as const] : []),
    ]);
    const last = Math.max(...ids.map((id) => r.arrivals.get(id) ?? 0));
    // startedAt / lastAt: the load's window on this process's clock (first request, last arrival at `r`).
    // benchCpu: the bench process's cores busy (generator and receivers); benchCpuUs: its CPU per event (µs).
    const result = { rate: countArrived(ids, r.arrivals) / ((last - res.startedAt) / 1000), startedAt: res.startedAt, lastAt: last, ok, events: ids.length, duplicates: r.duplicates(), ingestAcceptedPerS: ids.length / ((res.endedAt - res.startedAt) / 1000), benchCpu: (cpu.user + cpu.system) / 1000 / (last - res.startedAt), benchCpuUs: (cpu.user + cpu.system) / ids.length, cpuPerEvent };
    for (const x of [r, ...alsoAt]) x.reset();
    return result;
  }

  /**
   * An open-loop load at a fixed rate from one source: end-to-end latency per event = arrival at `r`
   * − the moment the generator got ingest's 200 for the request carrying it (one process, one clock),
   * and where that time went, hop by hop (hops.ts). Low rates send one call per request, as
   * browsers and unbatched clients do; higher rates batch so the generator keeps its pace, unless
   * `oneCall` asks for one call per request (POST /v1/track, as a browser sends it) at any rate.
   */
  async paced(src: Source, r: BenchReceiver, label: string, events: number, ratePerS: number, oneCall = false) {
    const { s, runId, ref, taskHops } = this.ctx;
    const { p1 } = this;
    const batchSize = oneCall || ratePerS < 100 ? 1 : ratePerS < 1000 ? 5 : s.batchSize;
    const reqs = oneCall ? singleCallRequests(runId, label, events) : batchRequests(runId, label, Math.ceil(events / batchSize), batchSize);
    const ids = reqs.flatMap((x) => x.ids);
    const watcher = await new HopWatcher(ref, p1.topics.deliveryAttempts, taskHops ? p1.topics.delivery : undefined).start();
    const statsOf = () => Promise.all(p1.services.map((x) => scrapeStats(x.url)));
    const stats0 = await statsOf();
    // The bench's own event loop: it takes the acknowledgements and the arrivals, so its lag is in both.
    const benchLoop = monitorEventLoopDelay({ resolution: 1 });
    benchLoop.enable();
    try {
      const res = await runLoad({ origin: this.ingest!.url, path: oneCall ? '/v1/track' : '/v1/batch', headers: basicAuth(src), requests: reqs, concurrency: s.ingestConcurrency * 4, intervalMs: (1000 * batchSize) / ratePerS });
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
  }
}
