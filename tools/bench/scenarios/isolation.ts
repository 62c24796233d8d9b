// Isolation: a healthy destination alone, beside a healthy neighbour of the same source, and beside
// a timing-out one, at saturation in rounds; then below saturation (half the alone rate), alone and
// beside the timing-out one, with latency per hop.
import type { Chain } from '../chain.js';
import { log, type BenchContext } from '../context.js';
import { median } from '../load.js';
import { cpuAloneVsBeside, hop, round, type Row } from '../report.js';
import { scrapeSums } from '../service-stats.js';

export async function isolation(ctx: BenchContext, chain: Chain): Promise<Row[]> {
  const { s } = ctx;
  const { p1, sAlone, rAlone, sDuo, rDuo, rDuoOther, sPair, rBeside, rHang } = chain;
  const rows: Row[] = [];
  // Production-like retry settings (first tier 10 s, breaker open 30 s; Chain.useProductionRetries).
  await chain.useProductionRetries();
  log(`isolation, ${s.isolationRounds} round(s): ${s.isolationEvents} events to a healthy destination alone, beside a healthy one, beside a timing-out one`);
  await chain.saturate(sAlone, rAlone, 'warm-alone', s.isolationEvents / 4); // the restarted delivery warms up first (JIT, connections)
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
  for (let k = 0; k < s.isolationRounds; k++) {
    // Alternating order (alone and beside healthy, then beside timing-out; beside timing-out first in odd rounds), like the other
    // paired rows: a rate drifting within a round favours neither side.
    const pair = async () => ({
      a: await chain.saturate(sAlone, rAlone, `alone${k}`, s.isolationEvents),
      d: await chain.saturate(sDuo, rDuo, `duo${k}`, s.isolationEvents, [rDuoOther]),
    });
    const first = k % 2 === 1 ? undefined : await pair();
    const [before, heldBefore] = [await tier2Retries(), await heldByFanout()];
    const h = await chain.saturate(sPair, rBeside, `beside${k}`, s.isolationEvents);
    redeferred.push((await tier2Retries()) - before);
    held.push((await heldByFanout()) - heldBefore);
    const { a, d } = first ?? await pair();
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
      cpuUsAloneVsBeside: cpuAloneVsBeside(cpuAlone, cpuBeside),
    },
    rssMb: chain.rss(),
  });
  rows.push({
    scenario: 'isolation: beside timing-out vs beside healthy', value: median(hung), unit: 'delivered/s', baseline: { name: 'beside healthy', value: median(duo) }, ratio: vsDuo, target: '≥ 0.9', met: vsDuo >= 0.9, verified: ok,
    details: { roundRatios: hung.map((h, k) => round(h / duo[k]!, 2)).join('/'), duoVsAlone: round(median(duo.map((d, k) => d / alone[k]!)), 2), note: 'same task volume on both sides: what the hang itself costs' }, rssMb: {},
  });
  // Below saturation, where a deployment runs: the same offered rate (half the alone rate) to the
  // healthy destination alone, then beside the timing-out one; delivered rate and latency.
  const rate = median(alone) / 2;
  log(`isolation at 50% load: ${s.isolationEvents} events at ${round(rate)}/s, alone then beside the timing-out destination`);
  const pa = await chain.paced(sAlone, rAlone, 'paced-alone', s.isolationEvents, rate);
  const ph = await chain.paced(sPair, rBeside, 'paced-beside', s.isolationEvents, rate);
  rows.push({
    scenario: 'isolation at 50% load: beside timing-out', value: ph.delivered, unit: 'delivered/s', baseline: { name: 'alone', value: pa.delivered }, ratio: ph.delivered / pa.delivered, target: '≥ 0.9', met: ph.delivered / pa.delivered >= 0.9, verified: pa.ok && ph.ok,
    details: {
      offered: rate, p50ms: ph.p50ms, p99ms: ph.p99ms, aloneP50ms: pa.p50ms, aloneP99ms: pa.p99ms,
      // Per hop (p50/p99 ms, as in the latency rows), beside then alone: where the hung neighbour costs.
      hopIngest: `${hop(ph.hops.ingest)} vs ${hop(pa.hops.ingest)}`, hopFanout: `${hop(ph.hops.toFanout)} vs ${hop(pa.hops.toFanout)}`,
      hopDelivery: `${hop(ph.hops.toDelivery)} vs ${hop(pa.hops.toDelivery)}`, hopHttp: `${hop(ph.hops.http)} vs ${hop(pa.hops.http)}`,
    },
    rssMb: chain.rss(),
  });
  return rows;
}
