// Load check: 10 000 calls from one process leave in few requests and the heap stays bounded.
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { Analytics } from './analytics.js';
import { startRecordingServer, type RecordingServer } from './test-support/recording-server.js';

const CALLS = 10_000;
let server: RecordingServer;
before(async () => {
  server = await startRecordingServer({ keepBodies: false });
  // A server that takes a moment to answer, so requests overlap as they would over a network.
  server.respond(() => ({ status: 200, body: { success: true }, delayMs: 5 }));
});
after(() => server.close());

const mb = (bytes: number) => (bytes / 1024 / 1024).toFixed(1);

// Collect garbage before measuring, so the numbers show what is retained, not what awaits GC.
// Without --expose-gc on the command line, the flag is set at run time (a fresh context sees gc).
function findGc(): (() => void) | undefined {
  const exposed = (globalThis as { gc?: () => void }).gc;
  if (exposed) return exposed;
  try {
    setFlagsFromString('--expose-gc');
    return runInNewContext('gc') as () => void;
  } catch {
    return undefined;
  }
}
const gc = findGc();
const heap = () => {
  gc?.();
  return process.memoryUsage().heapUsed;
};

async function round(n: number) {
  const requestsBefore = server.requests.length;
  const connectionsBefore = server.connections;
  const messagesBefore = server.messageCount;
  const c = new Analytics('wk_load', { endpoint: server.url, env: {} });
  let delivered = 0;
  let failed = 0;
  const callback = (err?: Error) => (err ? failed++ : delivered++);
  const heapBefore = heap();
  const started = performance.now();
  for (let i = 0; i < n; i++) {
    c.track({ userId: `user-${i % 500}`, event: 'Item Viewed', properties: { item: `sku-${i}`, price: i % 100, tags: ['a', 'b'] } }, callback);
  }
  const callsMs = performance.now() - started;
  const heapQueued = process.memoryUsage().heapUsed;
  await c.close();
  const totalMs = performance.now() - started;
  return {
    callsMs, totalMs, delivered, failed, pending: c.pending, heapBefore, heapQueued, heapAfter: heap(),
    requests: server.requests.length - requestsBefore, connections: server.connections - connectionsBefore, messages: server.messageCount - messagesBefore,
  };
}

it(`${CALLS} calls leave in about ${CALLS}/flushAt requests and the heap stays bounded`, async () => {
  // Warm-up: the first fetch loads Node's HTTP client (undici) lazily; that is not the client's cost.
  await round(20);

  const first = await round(CALLS);
  const second = await round(CALLS);
  for (const [name, r] of [['first', first], ['second', second]] as const) {
    console.log(`# load (${name} ${CALLS}): calls took ${r.callsMs.toFixed(0)} ms (${((r.callsMs * 1000) / CALLS).toFixed(1)} µs/call); all sent after ${r.totalMs.toFixed(0)} ms`);
    console.log(`# load (${name} ${CALLS}): ${r.requests} HTTP requests over ${r.connections} new connections for ${r.messages} messages; ${r.delivered} delivered, ${r.failed} failed`);
    console.log(`# load (${name} ${CALLS}): heapUsed before ${mb(r.heapBefore)} MB, all queued ${mb(r.heapQueued)} MB, after close ${mb(r.heapAfter)} MB (retained ${mb(r.heapAfter - r.heapBefore)} MB${gc ? ', measured after gc' : ', gc unavailable'})`);
  }

  for (const r of [first, second]) {
    assert.equal(r.messages, CALLS);
    assert.equal(r.delivered, CALLS);
    assert.equal(r.pending, 0);
    assert.ok(r.requests <= CALLS / 20 + 5, `${r.requests} requests`);
    assert.ok(r.heapAfter - r.heapBefore < 40 * 1024 * 1024, `heap grew by ${mb(r.heapAfter - r.heapBefore)} MB`);
  }
  assert.ok(server.maxConcurrent <= 16, `${server.maxConcurrent} requests at once`);
  console.log(`# load: at most ${server.maxConcurrent} requests in flight at once (maxConcurrentRequests 16)`);
  // A leak would show again in the second round; idle keep-alive sockets and the recording
  // server's own request log (~1 MB per round) account for what is retained.
  assert.ok(second.heapAfter - second.heapBefore < 10 * 1024 * 1024, `second round retained ${mb(second.heapAfter - second.heapBefore)} MB`);
});
