// Correction to kafkajs 2.2.4: a connection's request queue no longer wakes its process a
// thousand times a second, nor ten times a second, while nothing is going on.
//
// 1. Defect: RequestQueue.scheduleCheckPendingRequests (src/network/requestQueue/index.js)
//    schedules the next check at `throttledUntil - now`, which is negative when the broker has not
//    throttled the client, and checkPendingRequests schedules again each time it runs. Once a
//    connection has had a response, each of its queues runs a 1 ms timer for ever. Upstream:
//    https://github.com/tulios/kafkajs/issues/1556 (CPU hike on v2.2.4), pull request
//    https://github.com/tulios/kafkajs/pull/1667 (not merged).
//    Before: every idle service spent 2-4 % of a core on these timers (each has a dozen
//    connections: its consumers, producers and admin clients).
//    After: with nothing pending and no throttle in force, nothing is scheduled. Requests queued
//    behind the in-flight limit are still sent when an answer or a timeout frees a slot (kafkajs
//    checks the queue then), and a throttle still schedules a check for when it ends.
// 2. Not a defect, a cost: RequestQueue.scheduleRequestTimeoutCheck looks for timed-out requests
//    every min(requestTimeout, 100) ms on every connection, busy or not. With requestTimeout at
//    30 s (client.ts), it now looks every TIMEOUT_CHECK_MS: a request times out at most that much
//    late, instead of 100 ms.
// Measured by `npm run bench -- --only idle`. Reproduced by: request-queue-timers.test.ts.
// Installed by install.ts: RequestQueue.prototype.scheduleCheckPendingRequests and
// scheduleRequestTimeoutCheck replaced.
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

/** kafkajs's delay before checking a queue that has requests waiting behind the in-flight limit. */
const CHECK_PENDING_REQUESTS_INTERVAL = 10;
/** How often a connection looks for requests past their timeout (kafkajs: min(requestTimeout, 100 ms)). */
export const TIMEOUT_CHECK_MS = 1000;

interface InflightRequest { sentAt: number; requestTimeout: number; timeoutRequest(): void }
interface RequestQueueInternals {
  enforceRequestTimeout: boolean;
  requestTimeout: number;
  requestTimeoutIntervalId?: NodeJS.Timeout;
  inflight: Map<number, InflightRequest>;
  isConnected(): boolean;
  destroy(): void;
  scheduleRequestTimeoutCheck(): void;
  pending: unknown[];
  throttledUntil: number;
  throttleCheckTimeoutId: NodeJS.Timeout | null;
  checkPendingRequests(): void;
  scheduleCheckPendingRequests(): void;
}

const installed = Symbol.for('switchyard.kafkajs.requestQueueTimers');

export function installRequestQueueTimers(): void {
  const RequestQueue = require('kafkajs/src/network/requestQueue/index.js') as { prototype: RequestQueueInternals & { [installed]?: true } };
  const { prototype } = RequestQueue;
  if (prototype[installed]) return;
  for (const method of ['scheduleCheckPendingRequests', 'checkPendingRequests', 'scheduleRequestTimeoutCheck', 'destroy'] as const) {
    if (typeof prototype[method] !== 'function') throw new Error(`kafkajs RequestQueue has no ${method}: the request-queue timers correction no longer fits this kafkajs`);
  }
  prototype.scheduleCheckPendingRequests = function (this: RequestQueueInternals) {
    if (this.throttleCheckTimeoutId) return; // one check is scheduled already
    const throttledFor = this.throttledUntil - Date.now();
    if (this.pending.length === 0 && throttledFor <= 0) return; // nothing to send, nothing to wait for
    this.throttleCheckTimeoutId = setTimeout(() => {
      this.throttleCheckTimeoutId = null;
      this.checkPendingRequests();
    }, throttledFor > 0 ? throttledFor : CHECK_PENDING_REQUESTS_INTERVAL);
  };
  prototype.scheduleRequestTimeoutCheck = function (this: RequestQueueInternals) {
    if (!this.enforceRequestTimeout) return;
    this.destroy();
    this.requestTimeoutIntervalId = setInterval(() => {
      const now = Date.now();
      this.inflight.forEach((request) => { if (now - request.sentAt > request.requestTimeout) request.timeoutRequest(); });
      if (!this.isConnected()) this.destroy();
    }, Math.min(this.requestTimeout, TIMEOUT_CHECK_MS));
  };
  prototype[installed] = true;
}
