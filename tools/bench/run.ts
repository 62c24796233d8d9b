// The order of the scenarios, and what they hand on: baseline (a)'s rate and (b)'s figures to the
// end-to-end row, its saturation rate to the latency rows, (b)'s figures to the delivery CPU row;
// (c)'s, the bare fan-out's, the bare consumer's and the bare client's CPU per event, with the
// end-to-end rate and the bench's own CPU per event, to the sum-of-parts row (last of them).
// The chain scenarios share P1 and P2 (chain.ts); fan-out CPU, delivery CPU, horizontal and backlog
// set up pipelines of their own once the chain has stopped.
import { Chain } from './chain.js';
import type { BenchContext } from './context.js';
import type { Scenario } from './options.js';
import { startBenchReceiver, type BenchReceiver, type ReceiverMode } from './receiver.js';
import type { Row } from './report.js';
import { attemptsOnOff } from './scenarios/attempts.js';
import { backlogMemory } from './scenarios/backlog.js';
import { kafkaBaseline } from './scenarios/baseline-kafka.js';
import { measurePost, postRow, type PostSummary } from './scenarios/baseline-post.js';
import { deliveryCpu } from './scenarios/delivery-cpu.js';
import { endToEnd } from './scenarios/end-to-end.js';
import { failover } from './scenarios/failover.js';
import { fanoutCpu } from './scenarios/fanout-cpu.js';
import { horizontal } from './scenarios/horizontal.js';
import { idle } from './scenarios/idle.js';
import { ingestScenario } from './scenarios/ingest.js';
import { isolation } from './scenarios/isolation.js';
import { latencyRounds } from './scenarios/latency.js';
import { manyDestinations } from './scenarios/many-destinations.js';
import { isolationRateLimited } from './scenarios/rate-limited.js';
import { retryStorm } from './scenarios/retry-storm.js';
import { slowReceiver } from './scenarios/slow-receiver.js';
import { coresAvailable, sumOfPartsRow } from './scenarios/sum-of-parts.js';

/** The scenarios of `only` (and the baselines they are compared with), in table order. */
export async function runScenarios(run: Omit<BenchContext, 'receiver'>, only: Set<Scenario>): Promise<Row[]> {
  const rows: Row[] = [];
  const receivers: BenchReceiver[] = [];
  const ctx: BenchContext = { ...run, receiver: async (mode?: ReceiverMode) => { const r = await startBenchReceiver(mode); receivers.push(r); return r; } };
  // The latency load runs at half the saturation rate, and many destinations compare with it: both need the saturation run.
  if (only.has('latency') || only.has('many')) only.add('e2e');
  // The sum of the parts needs every part, each measured in this run.
  if (only.has('parts')) for (const x of ['ingest', 'e2e', 'fanout', 'cpu'] as const) only.add(x);
  const needsChain = ['e2e', 'attempts', 'latency', 'storm', 'isolation', 'ratelimit'].some((x) => only.has(x as Scenario));
  // First, on the fresh broker: its idle cost grows with the topics the other scenarios' pipelines add.
  if (only.has('idle')) rows.push(...await idle(ctx));
  if (only.size === 1 && only.has('idle')) return rows;
  const chain = new Chain(ctx);
  ctx.cleanups.push(() => chain.p1.stopAll(), () => chain.p2.stopAll());
  ctx.cleanups.push(() => Promise.all(receivers.map((r) => r.close())));
  await chain.setup();
  if (only.has('ingest') || needsChain) chain.startIngest();

  let aRate = NaN;
  let rawPost: PostSummary | undefined;
  /** The sum-of-parts row's figures, as the scenarios measure them. */
  const parts = { bareIngestUs: NaN, bareFanoutUs: NaN, bareConsumeUs: NaN, bareClientUs: NaN, benchUs: NaN, brokerUs: NaN, verified: true };
  if (only.has('e2e')) {
    const a = await kafkaBaseline(ctx);
    rows.push(a.row);
    aRate = a.rate;
  }
  // Without the end-to-end row (which measures it in rounds beside each of its own), once here.
  if (only.has('cpu') && !only.has('e2e')) {
    const b = postRow(ctx, [await measurePost(ctx, chain.rMain, '')]);
    rows.push(b.row);
    rawPost = b.summary;
  }
  if (only.has('ingest')) {
    const i = await ingestScenario(ctx, chain);
    rows.push(...i.rows);
    parts.bareIngestUs = i.cUsPerEvent;
    parts.verified &&= i.rows.every((r) => r.verified);
  }
  if (!needsChain && !only.has('slow') && !only.has('backlog') && !only.has('fanout') && !only.has('cpu')) {
    if (only.has('horizontal')) rows.push(...await horizontal(ctx));
    if (only.has('failover')) rows.push(...await failover(ctx));
    return rows;
  }

  if (needsChain) await chain.startChain();
  let eRate = NaN;
  if (only.has('e2e')) {
    const e = await endToEnd(ctx, chain, aRate);
    rows.push(...e.rows);
    eRate = e.eRate;
    rawPost = e.post;
    parts.benchUs = e.benchUsPerEvent;
    parts.brokerUs = e.brokerUsPerEvent;
    parts.verified &&= e.verified;
  }
  if (only.has('attempts')) rows.push(await attemptsOnOff(ctx, chain));
  if (only.has('latency')) rows.push(...await latencyRounds(ctx, chain, eRate));
  if (only.has('storm')) rows.push(await retryStorm(ctx, chain));
  if (only.has('slow')) rows.push(await slowReceiver(ctx, chain));
  if (only.has('isolation')) rows.push(...await isolation(ctx, chain));
  // Last on P1: the limited destination's held tasks come round in the first tier for minutes after.
  if (only.has('ratelimit')) rows.push(await isolationRateLimited(ctx, chain));
  await chain.p1.stopAll();
  if (only.has('many')) rows.push(...await manyDestinations(ctx, eRate));

  if (only.has('fanout')) {
    const f = await fanoutCpu(ctx);
    rows.push(f.row);
    parts.bareFanoutUs = f.bareUsPerRecord;
    parts.verified &&= f.row.verified;
  }
  if (only.has('cpu')) {
    const d = await deliveryCpu(ctx, rawPost);
    rows.push(...d.rows);
    parts.bareConsumeUs = d.consumeUsPerTask;
    parts.bareClientUs = d.clientUsPerRequest;
    parts.verified &&= d.verified;
  }
  if (only.has('parts')) rows.push(sumOfPartsRow({ rate: eRate, cores: coresAvailable(), parts, verified: parts.verified, brokerUs: parts.brokerUs }));
  if (only.has('horizontal')) rows.push(...await horizontal(ctx));
  if (only.has('backlog') && ctx.s.backlogTasks > 0) rows.push(await backlogMemory(ctx));
  // Last: on a three-node cluster of its own.
  if (only.has('failover')) rows.push(...await failover(ctx));
  return rows;
}
