// End-to-end latency against rate: light, moderate, heavy, and 50 % of saturation, then one call
// per request at 200 and 1 000 requests/s (the lower rates send one call per request too). The rows from
// 500/s up run in rounds: one load of 20 000 events at 4 000/s lasts 5 s, and a few slow seconds
// made a whole run's p99 (53/307 ms in one run, 26/96 in the next, same code). The row reports the
// median round, by p99; the notes give every round and all rounds' samples pooled (the first
// round, the step up from the rate before, is usually the slowest).
import type { Chain, Paced } from '../chain.js';
import { log, type BenchContext } from '../context.js';
import { quantile } from '../load.js';
import { hop, round, type Row } from '../report.js';

/** Latency rows at this rate and above run `rounds` loads; the slower ones are long enough alone (60 s at 5/s). */
const LATENCY_ROUNDS_FROM_RATE = 500;

/** One row per rate of `latencyRates`; `eRate` is the end-to-end saturation rate ('half' runs at half of it). */
export async function latencyRounds(ctx: BenchContext, chain: Chain, eRate: number): Promise<Row[]> {
  const { s } = ctx;
  const { sMain, rMain } = chain;
  const rows: Row[] = [];
  for (const { rate: wanted, events, oneCall = false } of s.latencyRates) {
    const rate = wanted === 'half' ? eRate / 2 : wanted;
    const name = `${wanted === 'half' ? `50% of saturation (${round(rate)}/s)` : `${rate}/s`}${oneCall ? ', one call per request' : ''}`;
    const rounds = rate >= LATENCY_ROUNDS_FROM_RATE ? s.rounds : 1;
    log(`end to end latency at ${name}: ${rounds} round(s) of ${events} events`);
    const runs: Paced[] = [];
    for (let k = 0; k < rounds; k++) runs.push(await chain.paced(sMain, rMain, `lat${round(rate)}${oneCall ? 'c' : ''}r${k}`, events, rate, oneCall));
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
      rssMb: chain.rss(),
    });
  }
  return rows;
}
