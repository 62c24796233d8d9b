// End to end at saturation, in paired rounds with baseline (b), back to back, the order
// alternating (as ingest and (c)): a single (b) taken minutes before the chain's rounds compared
// two different moments of a machine whose speed drifts by a third or more (delivery's CPU per task
// has ranged 60–78 µs over a few runs).
import type { Chain, Saturation } from '../chain.js';
import { log, type BenchContext } from '../context.js';
import { median } from '../load.js';
import { round, type Row } from '../report.js';
import { measurePost, postRow, type PostRun, type PostSummary } from './baseline-post.js';

/**
 * The rows of baseline (b) and end to end; the saturation rate (the latency rows run at half of it),
 * (b)'s figures, and the bench process's and the broker's CPU per event (the bench's: generator and
 * receiver; medians of the rounds; the broker's NaN on a reused stack).
 */
export async function endToEnd(ctx: BenchContext, chain: Chain, aRate: number): Promise<{ rows: Row[]; eRate: number; post: PostSummary; benchUsPerEvent: number; brokerUsPerEvent: number; verified: boolean }> {
  const { s } = ctx;
  const { sMain, rMain } = chain;
  log(`end to end at saturation, ${s.rounds} round(s) paired with baseline (b): ${s.e2eEvents} events each`);
  const runs: Saturation[] = [];
  const posts: PostRun[] = [];
  for (let k = 0; k < s.rounds; k++) {
    if (k % 2 === 0) posts.push(await measurePost(ctx, rMain, ` (round ${k + 1})`));
    runs.push(await chain.saturate(sMain, rMain, `e2e${k}`, s.e2eEvents));
    if (k % 2 === 1) posts.push(await measurePost(ctx, rMain, ` (round ${k + 1})`));
  }
  const b = postRow(ctx, posts);
  const minAB = Math.min(aRate, b.summary.rate);
  const eRate = median(runs.map((e) => e.rate));
  const ratios = runs.map((e, k) => e.rate / Math.min(aRate, posts[k]!.rate));
  const ratio = median(ratios);
  const e = runs.find((x) => x.rate === eRate) ?? runs[0]!;
  const row: Row = {
    scenario: 'end to end at saturation', value: eRate, unit: 'delivered/s', baseline: { name: 'min((a),(b))', value: minAB }, ratio, target: '≥ 0.5', met: ratio >= 0.5, verified: runs.every((x) => x.ok),
    details: { events: e.events, roundRates: runs.map((x) => round(x.rate)).join('/'), roundRatios: ratios.map((x) => round(x, 2)).join('/'), warmUpRates: chain.warmRates.map((x) => round(x)).join('/'), ingestAcceptedPerS: e.ingestAcceptedPerS, duplicates: runs.reduce((n, x) => n + x.duplicates, 0), benchCpu: e.benchCpu, ...e.cpuPerEvent }, rssMb: chain.rss(),
  };
  return { rows: [b.row, row], eRate, post: b.summary, benchUsPerEvent: median(runs.map((x) => x.benchCpuUs)), brokerUsPerEvent: median(runs.map((x) => x.cpuPerEvent.brokerCpuUs ?? NaN)), verified: row.verified };
}
