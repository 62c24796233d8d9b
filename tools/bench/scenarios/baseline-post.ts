// Baseline (b): raw undici POSTs to the same receiver with the same concurrency, in the bench
// process. The end-to-end row measures it in rounds beside its own; the delivery CPU row reports it.
import { log, type BenchContext } from '../context.js';
import { median, runLoad, type LoadRequest } from '../load.js';
import { countArrived, type BenchReceiver } from '../receiver.js';
import { round, type Row } from '../report.js';

export type PostRun = Awaited<ReturnType<typeof measurePost>>;
/** Requests/s and the bench process's CPU per request (undici client and node:http receiver, one process). */
export interface PostSummary { rate: number; usPerRequest: number }

/** One load of `postRequests` POSTs to `r`; verified when every one arrived and none failed. */
export async function measurePost(ctx: BenchContext, r: BenchReceiver, label: string) {
  const { s, runId } = ctx;
  log(`baseline (b)${label}: undici POST → receiver, ${s.postRequests} requests, concurrency ${s.postConcurrency}`);
  const bodies: LoadRequest[] = Array.from({ length: s.postRequests }, (_, i) => {
    const id = `${runId}-post${label.replace(/\W/g, '')}-${i}`;
    return { ids: [id], body: JSON.stringify({ version: 1, type: 'track', messageId: id, userId: `user-${i % 997}`, event: 'Order Completed', properties: { orderId: `o-${i}`, revenue: 42.5, currency: 'EUR', products: [{ sku: 'sku-1', qty: 2 }] }, context: { library: { name: 'switchyard-bench' } }, timestamp: new Date().toISOString() }) };
  });
  const u = new URL(r.url);
  const b = await runLoad({ origin: u.origin, path: u.pathname, requests: bodies, concurrency: s.postConcurrency });
  const verified = countArrived(bodies.flatMap((x) => x.ids), r.arrivals) === s.postRequests && b.errors === 0;
  r.reset();
  return { rate: s.postRequests / ((b.endedAt - b.startedAt) / 1000), usPerRequest: (b.cpuMs * 1000) / s.postRequests, benchCpu: b.cpuMs / (b.endedAt - b.startedAt), verified };
}

/** The row of one or more loads: the median one's figures. */
export function postRow(ctx: BenchContext, runs: PostRun[]): { row: Row; summary: PostSummary } {
  const { s } = ctx;
  const b = runs.find((x) => x.rate === median(runs.map((r) => r.rate))) ?? runs[0]!;
  return {
    row: {
      scenario: 'baseline (b) undici POST→receiver', value: b.rate, unit: 'req/s', verified: runs.every((x) => x.verified),
      details: { concurrency: s.postConcurrency, ...(runs.length > 1 ? { roundRates: runs.map((x) => round(x.rate)).join('/') } : {}), benchCpu: b.benchCpu, benchUsPerReq: b.usPerRequest }, rssMb: {},
    },
    summary: { rate: b.rate, usPerRequest: b.usPerRequest },
  };
}
