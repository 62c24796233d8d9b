// Correction to kafkajs 2.2.4: a connection with nothing queued no longer checks its queue every
// millisecond.
//
// Defect: RequestQueue.scheduleCheckPendingRequests (src/network/requestQueue/index.js) schedules
// the next check at `throttledUntil - now`, which is negative when the broker has not throttled the
// client, and checkPendingRequests schedules again each time it runs. Once a connection has had a
// response, each of its queues runs a 1 ms timer for ever. Upstream:
// https://github.com/tulios/kafkajs/issues/1556 (CPU hike on v2.2.4), pull request
// https://github.com/tulios/kafkajs/pull/1667 (not merged).
// Before: every idle service spent 2-4 % of a core on these timers (each has a dozen connections:
// its consumers, producers and admin clients), measured by `npm run bench -- --only idle`.
// After: with nothing pending and no throttle in force, nothing is scheduled. Requests queued
// behind the in-flight limit are still sent when an answer or a timeout frees a slot (kafkajs
// checks the queue then), and a throttle still schedules a check for when it ends.
// Reproduced by: pending-check-loop.test.ts.
// Installed by install.ts: RequestQueue.prototype.scheduleCheckPendingRequests replaced.
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

/** kafkajs's delay before checking a queue that has requests waiting behind the in-flight limit. */
const CHECK_PENDING_REQUESTS_INTERVAL = 10;

interface RequestQueueInternals {
  pending: unknown[];
  throttledUntil: number;
  throttleCheckTimeoutId: NodeJS.Timeout | null;
  checkPendingRequests(): void;
  scheduleCheckPendingRequests(): void;
}

const installed = Symbol.for('switchyard.kafkajs.pendingCheckLoop');

export function installPendingCheckLoop(): void {
  const RequestQueue = require('kafkajs/src/network/requestQueue/index.js') as { prototype: RequestQueueInternals & { [installed]?: true } };
  const { prototype } = RequestQueue;
  if (prototype[installed]) return;
  if (typeof prototype.scheduleCheckPendingRequests !== 'function' || typeof prototype.checkPendingRequests !== 'function') {
    throw new Error('kafkajs RequestQueue has no scheduleCheckPendingRequests: the pending-check correction no longer fits this kafkajs');
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
  prototype[installed] = true;
}
