// Slow receiver on one partition: P2's delivery alone drains tasks to a receiver answering every
// request after 200 ms, with `slowCap` requests in flight to it; the ceiling is cap ÷ 0.2 s.
import type { Chain } from '../chain.js';
import { log, type BenchContext } from '../context.js';
import { countArrived } from '../receiver.js';
import type { Row } from '../report.js';

export async function slowReceiver(ctx: BenchContext, chain: Chain): Promise<Row> {
  const { s, runId } = ctx;
  const { p2, rSlow, dSlow } = chain;
  log(`slow receiver: ${s.slowTasks} tasks, cap ${s.slowCap}, 200 ms per response, one partition`);
  const delivery = await p2.start('delivery');
  chain.p2Delivery = delivery;
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
  const row: Row = {
    scenario: 'slow receiver (200 ms), 1 partition', value: slowRate, unit: 'delivered/s', baseline: { name: 'cap/0.2s', value: slowCeiling }, ratio: slowRate / slowCeiling, target: '≥ 0.9', met: slowRate / slowCeiling >= 0.9, verified: slowVerified,
    details: { tasks: s.slowTasks, cap: s.slowCap, wallS: (slowLast - slowStart) / 1000 }, rssMb: chain.rss(),
  };
  await delivery.stop();
  p2.services.splice(0);
  return row;
}
