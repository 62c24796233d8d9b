// The least a webhook sender can do with undici: POSTs through an Agent of Pools with undici's
// low-level `dispatch` and a handler that keeps only the status, as delivery's WebhookClient does,
// with no Kafka, no signing and no bookkeeping. Run as its own process so its CPU time is its own.
// Env: BARE_URL (the receiver), BARE_PREFIX (messageId prefix), BARE_WARM and BARE_REQUESTS (counts),
// BARE_CONCURRENCY. Prints `warm` when the warm-up requests were answered, then one JSON line
// {requests, failed, cpuUs, ms} for the measured ones, and exits.
import { Agent, Pool, type Dispatcher } from 'undici';
import { benchWebhookBody } from './bench-webhook-body.js';

const url = new URL(process.env.BARE_URL!);
const prefix = process.env.BARE_PREFIX ?? 'bare';
const warm = Number(process.env.BARE_WARM ?? 1000);
const requests = Number(process.env.BARE_REQUESTS ?? 10_000);
const concurrency = Number(process.env.BARE_CONCURRENCY ?? 200);

const agent = new Agent({ keepAliveTimeout: 30_000, factory: (origin, options) => new Pool(origin, options), headersTimeout: 0, bodyTimeout: 0 });
const headers = { 'content-type': 'application/json', 'user-agent': 'switchyard-bench' };

/** The body of the delivery CPU row's i-th task. */
const body = (i: number): Buffer => Buffer.from(benchWebhookBody(`${prefix}-${i}`, i, new Date().toISOString()));

let failed = 0;
function post(payload: Buffer): Promise<void> {
  return new Promise((resolve) => {
    let status = 0;
    const handler: Dispatcher.DispatchHandler = {
      onConnect: () => {},
      onHeaders: (statusCode) => { status = statusCode; return true; },
      onData: () => true,
      // Handed back a turn later, as delivery does, so undici reuses the connection (webhook-client.ts).
      onComplete: () => { if (status < 200 || status >= 300) failed++; setImmediate(resolve); },
      onError: () => { failed++; setImmediate(resolve); },
    };
    agent.dispatch({ origin: url.origin, path: url.pathname, method: 'POST', body: payload, headers }, handler);
  });
}

async function run(bodies: Buffer[]): Promise<void> {
  const count = bodies.length;
  let next = 0;
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (next < count) await post(bodies[next++]!);
  }));
}

const warmBodies = Array.from({ length: warm }, (_, i) => body(i));
const measuredBodies = Array.from({ length: requests }, (_, i) => body(warm + i));
await run(warmBodies);
process.stdout.write('warm\n');
const startCpu = process.cpuUsage();
const startedAt = Date.now();
await run(measuredBodies);
const cpu = process.cpuUsage(startCpu);
process.stdout.write(`${JSON.stringify({ requests, failed, cpuUs: cpu.user + cpu.system, ms: Date.now() - startedAt })}\n`);
await agent.close();
