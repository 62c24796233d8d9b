// Retry storm: the storm destination answers 503 for `stormMs`, then 200; the row is the time from
// the flip to the last arrival (P1 runs retry tiers of 1 s and 2 s and a 2 s breaker for this).
import type { Chain } from '../chain.js';
import { basicAuth } from '../chain.js';
import { log, type BenchContext } from '../context.js';
import { batchRequests, runLoad } from '../load.js';
import { countArrived } from '../receiver.js';
import type { Row } from '../report.js';

export async function retryStorm(ctx: BenchContext, chain: Chain): Promise<Row> {
  const { s, runId } = ctx;
  const { rStorm, sStorm } = chain;
  log(`retry storm: ${s.stormEvents} events, 503 for ${s.stormMs} ms`);
  const stormReqs = batchRequests(runId, 'storm', Math.ceil(s.stormEvents / s.batchSize), s.batchSize);
  const stormIds = stormReqs.flatMap((x) => x.ids);
  const stormStart = Date.now();
  const st = await runLoad({ origin: chain.ingest!.url, path: '/v1/batch', headers: basicAuth(sStorm), requests: stormReqs, concurrency: s.ingestConcurrency });
  await new Promise((r) => setTimeout(r, Math.max(0, stormStart + s.stormMs - Date.now())));
  const failedAttempts = rStorm.requests();
  rStorm.setMode({});
  const flip = Date.now();
  const stVerified = await rStorm.waitForAll(stormIds, s.deliverTimeoutMs).then(() => st.errors === 0, () => false);
  const drainMs = Math.max(...stormIds.map((id) => rStorm.arrivals.get(id) ?? Infinity)) - flip;
  return {
    scenario: `retry storm (503 for ${s.stormMs / 1000} s)`, value: drainMs / 1000, unit: 's to drain', verified: stVerified,
    details: { events: stormIds.length, attemptsDuring503: failedAttempts, lost: stormIds.length - countArrived(stormIds, rStorm.arrivals), duplicates: rStorm.duplicates(), tiers: '1s,2s', breakerOpen: '2s' }, rssMb: chain.rss(),
  };
}
