// The delivery-attempts topic: the same saturation load with attempt recording off and on. Each
// round restarts fan-out and delivery with fan-out's trace record and delivery's attempt records
// off, warms them and measures, and the same with the defaults (on); the order alternates.
import type { Chain } from '../chain.js';
import { log, type BenchContext } from '../context.js';
import { median } from '../load.js';
import { round, type Row } from '../report.js';

export async function attemptsOnOff(ctx: BenchContext, chain: Chain): Promise<Row> {
  const { s } = ctx;
  const { p1, sMain, rMain } = chain;
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
      await chain.saturate(sMain, rMain, `warm-${label}`, s.e2eEvents / 4);
      return chain.saturate(sMain, rMain, `e2e-${label}`, s.e2eEvents);
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
  return {
    scenario: 'end to end, attempts topic on vs off', value: median(onRates), unit: 'delivered/s', baseline: { name: 'off', value: median(offRates) }, ratio, target: '≥ 0.95', met: ratio >= 0.95, verified: ok,
    details: { events: s.e2eEvents, roundRatios: ratios.map((x) => round(x, 2)).join('/'), note: 'on = default; off = DELIVERY_RECORD_ATTEMPTS and FANOUT_RECORD_TRACE false; each after a restart and a warm-up' }, rssMb: chain.rss(),
  };
}
