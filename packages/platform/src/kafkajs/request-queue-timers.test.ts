import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { describe, it } from 'node:test';
import './index.js';
import { TIMEOUT_CHECK_MS } from './request-queue-timers.js';

const require = createRequire(import.meta.url);
interface Queue { requestTimeoutIntervalId?: NodeJS.Timeout; scheduleRequestTimeoutCheck(): void; pending: unknown[]; inflight: Map<number, unknown>; throttledUntil: number; throttleCheckTimeoutId: NodeJS.Timeout | null; checkPendingRequests(): void; maybeThrottle(ms: number): void; destroy(): void }
const RequestQueue = require('kafkajs/src/network/requestQueue/index.js') as new (o: object) => Queue;
const logger = { debug() {}, info() {}, warn() {}, error() {} };
const queue = () => new RequestQueue({ maxInFlightRequests: 1, requestTimeout: 30_000, enforceRequestTimeout: false, clientId: 'c', broker: 'b', logger });

describe('kafkajs request queue timers', () => {
  it('schedules no check when nothing is queued and no throttle is in force (kafkajs looped every 1 ms)', () => {
    const q = queue();
    q.checkPendingRequests(); // what every answer from the broker runs
    assert.equal(q.throttleCheckTimeoutId, null);
  });

  it('still schedules a check for a request queued behind the in-flight limit, and for the end of a throttle', () => {
    const q = queue();
    q.inflight.set(1, {});
    q.pending.push({ send() {} });
    q.checkPendingRequests();
    assert.notEqual(q.throttleCheckTimeoutId, null);
    q.destroy();
    const t = queue();
    t.maybeThrottle(5000);
    t.checkPendingRequests();
    assert.notEqual(t.throttleCheckTimeoutId, null);
    t.destroy();
  });

  it('looks for timed-out requests once a second, not every 100 ms, and still times them out', async () => {
    const q = new RequestQueue({ maxInFlightRequests: 1, requestTimeout: 30_000, enforceRequestTimeout: true, clientId: 'c', broker: 'b', logger });
    let timedOut = 0;
    q.inflight.set(1, { sentAt: Date.now() - 31_000, requestTimeout: 30_000, timeoutRequest: () => { timedOut++; } });
    q.scheduleRequestTimeoutCheck();
    assert.equal((q.requestTimeoutIntervalId as unknown as { _repeat: number })._repeat, TIMEOUT_CHECK_MS);
    await new Promise((r) => setTimeout(r, TIMEOUT_CHECK_MS + 100));
    assert.ok(timedOut >= 1);
    q.destroy();
  });
});
