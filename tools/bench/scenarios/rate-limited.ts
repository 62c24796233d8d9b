// Isolation from a rate-limited neighbour: per round, the same closed-loop load to a source with one
// healthy destination ("alone", the isolation rows' source), to a source with two healthy ones
// ("beside healthy": the same task volume), and to a source with a healthy destination and one
// limited to LIMITED_PER_S whose receiver answers at once; the healthy destination's delivered/s.
// Delivery holds the limited destination's tasks over the limit (in memory up to 1 s, else in the
// first retry tier), and fan-out holds them as ranges once delivery reports it holding
// (docs/decisions/0018-destination-rate-limits.md); the row also shows the limit held: what the
// limited receiver got during each beside round against N × seconds + the burst.
import { LIMITED_PER_S, type Chain } from '../chain.js';
import { log, type BenchContext } from '../context.js';
import { median } from '../load.js';
import { cpuAloneVsBeside, round, type Row } from '../report.js';
import { scrapeSums } from '../service-stats.js';

/** Arrivals (first 2xx per messageId, this process's clock) from `from` to `to` inclusive. */
export function arrivalsBetween(arrivals: Map<string, number>, from: number, to: number): number {
  let n = 0;
  for (const at of arrivals.values()) if (at >= from && at <= to) n++;
  return n;
}

/**
 * The most requests a destination limited to `perSecond` may get in a window of `seconds`
 * (docs/decisions/0018-destination-rate-limits.md): N × W, plus the burst of each instance's
 * bucket (a tenth of a second of its share, at least one request), which adds up to at most
 * N ÷ 10 + one request per instance.
 */
export function limitBound(perSecond: number, seconds: number, instances: number): number {
  return Math.floor(perSecond * seconds + perSecond / 10) + instances;
}

const HELD = 'delivery_rate_limited_total{action="held"}';
const WAITED = 'delivery_rate_limited_total{action="waited"}';
const FANOUT_HELD = 'fanout_tasks_held_total';

export async function isolationRateLimited(ctx: BenchContext, chain: Chain): Promise<Row> {
  const { s } = ctx;
  const { p1, sAlone, rAlone, sDuo, rDuo, rDuoOther, sLimited, rNeighbour, rLimited } = chain;
  // The isolation rows' settings (first tier 10 s): a held range comes round every 10 s, as in a deployment.
  const restarted = await chain.useProductionRetries();
  log(`isolation beside rate-limited, ${s.isolationRounds} round(s): ${s.isolationEvents} events to a healthy destination alone, beside a healthy one, beside one limited to ${LIMITED_PER_S}/s`);
  if (restarted) await chain.saturate(sAlone, rAlone, 'warm-rl-alone', s.isolationEvents / 4); // the restarted delivery warms up first (JIT, connections)
  const deliveries = p1.instances('delivery');
  const fanouts = p1.instances('fanout');
  const counters = async () => {
    const sums = await Promise.all(deliveries.map((x) => scrapeSums(x.url, [HELD, WAITED])));
    const fanoutSums = await Promise.all(fanouts.map((x) => scrapeSums(x.url, [FANOUT_HELD])));
    return { held: sums.reduce((a, x) => a + x[HELD]!, 0), waited: sums.reduce((a, x) => a + x[WAITED]!, 0), heldByFanout: fanoutSums.reduce((a, x) => a + x[FANOUT_HELD]!, 0) };
  };
  const alone: number[] = [];
  const duo: number[] = [];
  const beside: number[] = [];
  // Per beside round: requests the limited receiver got in the round's window, the bound, and the counters' deltas.
  const received: number[] = [];
  const bounds: number[] = [];
  const held: number[] = [];
  const waited: number[] = [];
  const heldByFanout: number[] = [];
  // Each service's CPU per healthy event (µs), alone and beside: steadier than the rates on a shared machine.
  const cpuAlone: Array<Record<string, number>> = [];
  const cpuBeside: Array<Record<string, number>> = [];
  let sent = 0;
  let ok = true;
  for (let k = 0; k < s.isolationRounds; k++) {
    // Alternating order (alone and beside healthy, then beside limited; beside limited first in odd rounds), like the other
    // paired rows: a rate drifting within a round (JIT, heaps, held ranges coming round) favours neither side.
    const pair = async () => ({
      a: await chain.saturate(sAlone, rAlone, `rl-alone${k}`, s.isolationEvents),
      d: await chain.saturate(sDuo, rDuo, `rl-duo${k}`, s.isolationEvents, [rDuoOther]),
    });
    const first = k % 2 === 1 ? undefined : await pair();
    const c0 = await counters();
    // The limited destination's tasks are not waited for: at N/s they take events ÷ N seconds, held in
    // the first tier meanwhile, and they come round during the later rounds (as in a deployment).
    const b = await chain.saturate(sLimited, rNeighbour, `rl-beside${k}`, s.isolationEvents);
    const c1 = await counters();
    const { a, d } = first ?? await pair();
    received.push(arrivalsBetween(rLimited.arrivals, b.startedAt, b.lastAt));
    bounds.push(limitBound(LIMITED_PER_S, (b.lastAt - b.startedAt) / 1000, deliveries.length));
    held.push(c1.held - c0.held);
    waited.push(c1.waited - c0.waited);
    heldByFanout.push(c1.heldByFanout - c0.heldByFanout);
    sent += b.events;
    alone.push(a.rate); duo.push(d.rate); beside.push(b.rate);
    cpuAlone.push(a.cpuPerEvent); cpuBeside.push(b.cpuPerEvent);
    ok &&= a.ok && d.ok && b.ok;
  }
  const ratio = median(beside.map((b, k) => b / alone[k]!));
  const limitHeld = received.every((n, k) => n <= bounds[k]!);
  return {
    scenario: 'isolation: healthy beside rate-limited', value: median(beside), unit: 'delivered/s', baseline: { name: 'alone', value: median(alone) }, ratio, target: '≥ 0.9, limit held', met: ratio >= 0.9 && limitHeld, verified: ok,
    details: {
      events: s.isolationEvents, perSecond: LIMITED_PER_S, roundRatios: beside.map((b, k) => round(b / alone[k]!, 2)).join('/'),
      roundRates: beside.map((b, k) => `${round(alone[k]!)}/${round(duo[k]!)}/${round(b)}`).join(' '),
      vsBesideHealthy: round(median(beside.map((b, k) => b / duo[k]!)), 2), cpuUsAloneVsBeside: cpuAloneVsBeside(cpuAlone, cpuBeside),
      // Requests to the limited destination during each beside round ÷ N × seconds + burst: the limit held when ≤.
      limitedReceivedVsBound: received.map((n, k) => `${n}/${bounds[k]}`).join(' '), limitHeld: limitHeld ? 'yes' : 'NO',
      // Tasks fan-out held instead of writing them; tasks delivery held (set aside in the first tier,
      // again each time a held range comes round) or kept waiting in memory.
      heldByFanoutDuringBeside: heldByFanout.join('/'), heldDuringBeside: held.join('/'), waitedDuringBeside: waited.join('/'),
      limitedArrivedSoFar: `${rLimited.arrivals.size}/${sent}`, limitedDuplicates: rLimited.duplicates(),
    },
    rssMb: chain.rss(),
  };
}
