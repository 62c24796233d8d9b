// Addition to kafkajs 2.2.4 (a cost, not a defect): a consumer with nothing to read waits longer at
// the broker between empty fetches.
//
// Why: a consumer's maxWaitTimeInMs is both how long an empty fetch waits at the broker and how
// long kafkajs sleeps when every partition is paused, fixed when the consumer is made. Fan-out and
// delivery keep it short (100 ms and 20 ms) so that a partition that resumes is read at once; with
// no traffic that was 50 empty fetches a second from delivery alone, and the stack of `npm start`
// used 0.35 of a core doing nothing (7 % delivery, 16 % the broker answering).
// What: once every fetch of a consumer has come back empty for IDLE_AFTER_MS, none of its
// partitions paused, its fetches wait up to IDLE_FETCH_WAIT_MS. A record, or a paused partition,
// returns it to its own wait at the next fetch. A waiting fetch returns as soon as a record
// arrives (minBytes), so the first call after a quiet spell is not held back; what waits longer
// is only what needs a fetch to end, by at most IDLE_FETCH_WAIT_MS while idle: noticing a
// rebalance (heartbeats go between fetches), and a stop (a consumer's disconnect waits for its
// requests in flight; a service closing several idle consumers one after another waits for each).
// 2 s, because the broker's share follows the fetch rate: at 500 ms the idle stack used 0.21 of a
// core (the broker 13 %), at 2 s 0.11-0.13 (the broker 6-7 %). The test suite took 170 s longer.
// Measured by: `npm run bench -- --only idle` (BENCHMARKS.md, the idle row); tested by idle-fetch-wait.test.ts.
// Installed by install.ts: ConsumerGroup.prototype.fetch wrapped.
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

/** Empty fetches for this long, nothing paused, and the consumer counts as idle. */
export const IDLE_AFTER_MS = 1000;
/** An idle consumer's fetch wait (its own, if longer). */
export const IDLE_FETCH_WAIT_MS = 2000;

interface Batch { isEmpty(): boolean }
export interface FetchingGroup {
  maxWaitTime: number;
  subscriptionState: { paused(): unknown[] };
  fetch(nodeId: number): Promise<Batch[]>;
}
interface IdleState { ownWait: number; busyAt: number }

const installed = Symbol.for('switchyard.kafkajs.idleFetchWait');
const states = new WeakMap<object, IdleState>();

/** Patches kafkajs's ConsumerGroup (its module is shared by every consumer of this process). */
export function installIdleFetchWait(clock: () => number = Date.now): void {
  const { prototype } = require('kafkajs/src/consumer/consumerGroup.js') as { prototype: FetchingGroup & { [installed]?: true } };
  if (prototype[installed]) return;
  const { fetch } = prototype;
  if (typeof fetch !== 'function') throw new Error('kafkajs ConsumerGroup has no fetch: the idle fetch wait no longer fits this kafkajs');
  prototype.fetch = idleAwareFetch(fetch, clock);
  prototype[installed] = true;
}

/** The wrapper, on its own for tests: `fetch` is kafkajs's ConsumerGroup.fetch. */
export function idleAwareFetch(fetch: FetchingGroup['fetch'], clock: () => number): FetchingGroup['fetch'] {
  return async function (this: FetchingGroup, nodeId: number) {
    let state = states.get(this);
    if (!state) states.set(this, (state = { ownWait: this.maxWaitTime, busyAt: clock() }));
    // Brokers are fetched concurrently and share maxWaitTime: every fetch of a group sets the same value from the same state.
    const paused = this.subscriptionState.paused().length > 0;
    if (paused) state.busyAt = clock();
    this.maxWaitTime = clock() - state.busyAt >= IDLE_AFTER_MS ? Math.max(state.ownWait, IDLE_FETCH_WAIT_MS) : state.ownWait;
    const batches = await fetch.call(this, nodeId);
    if (batches.some((b) => !b.isEmpty())) state.busyAt = clock();
    return batches;
  };
}
