// Correction to kafkajs 2.2.4: the one wrapper of ConsumerGroup.heartbeat. It corrects two things
// a heartbeat learns, each in its own branch below.
//
// 1. The coordinator moved, or cannot be reached.
//    Defects: ConsumerGroup.heartbeat (src/consumer/consumerGroup.js) lets a connection error or
//    request timeout from the coordinator through as it is; kafkajs keeps the dead coordinator and
//    the runner's retries end in a crash. Related upstream reports:
//    https://github.com/tulios/kafkajs/issues/939 and https://github.com/tulios/kafkajs/issues/1011
//    (the consumer crashes with "Not connected" from Broker.heartbeat). And NOT_COORDINATOR counts
//    as a rebalance (`isRebalancing` in src/errors.js), so the runner stops every fetcher and
//    rejoins; a rejoining group leader makes the whole group rebalance. The Java client instead
//    marks the coordinator unknown, finds the new one and heartbeats on.
//    Before: a lost broker that was the group's coordinator crashed every consumer of the group
//    (new member ids, a rebalance, finished work not yet committed sent again by the next owners);
//    once that crash was answered as NOT_COORDINATOR, every member still stopped fetching and
//    rejoined when the coordinator moved (the failover bench's controller kill: deliveries resumed
//    1–4 s after the broker was fenced, all partitions at once).
//    After: as the Java client does. The coordinator is looked up again (coordinator-cache.ts has
//    forgotten it: the request to it failed) and the heartbeat is sent there, every
//    COORDINATOR_RETRY_MS while the answer is "moved", "not available" or "loading". The new
//    coordinator knows the member and its generation from the group's stored state, and gives
//    every member a full session from when it loaded the group, so the search may outlast a
//    session: a killed coordinator is only replaced once the controller fences it (the broker
//    session timeout), and the new one then loads the group. A rebalance or an unknown member
//    learnt on the way goes to kafkajs as usual; a coordinator not found within searchLimitMs
//    (twice the session timeout, at least 30 s) is answered as NOT_COORDINATOR, on which kafkajs
//    rejoins under the same member id, as before.
//    Reproduced by: heartbeat.test.ts ("... the coordinator ..."); in a cluster by
//    test/faults-cluster.test.ts and the failover bench (`npm run bench -- --only failover`).
//
// 2. The group is rebalancing.
//    Defect: kafkajs has no "partitions revoked" callback: a member learns of a rebalance from a
//    heartbeat answered REBALANCE_IN_PROGRESS and rejoins at once. No upstream issue or pull
//    request found.
//    Before: a member that commits its own offsets (delivery: as tasks finish) had its last commits
//    refused once the new generation existed, and each partition that moved was read again by its
//    new owner from an offset behind what was already delivered.
//    After: a hook registered for the group with beforeRejoining() runs first, once per rebalance
//    however many heartbeats learn of it, while the group still waits for the member and accepts
//    its commits under the old generation (delivery commits what it finished); then kafkajs rejoins.
//    Reproduced by: heartbeat.test.ts ("a heartbeat that learns of a rebalance ..."); at stack
//    level by the rolling restart and scaling cases of test/faults-cluster.test.ts.
//
// Installed by install.ts: ConsumerGroup.prototype.heartbeat wrapped, once.
import { createRequire } from 'node:module';
import { setTimeout as sleep } from 'node:timers/promises';
import { UNREACHABLE_BROKER_ERRORS } from './fetch-broker-loss.js';

const require = createRequire(import.meta.url);

/** kafkajs's NOT_COORDINATOR error code: its runner rejoins (finding the coordinator again) on it. */
const NOT_COORDINATOR = 16;
/** Answers that say where the group's coordinator is has changed, or that it is still loading the group. */
const COORDINATOR_MOVED: ReadonlySet<string> = new Set(['NOT_COORDINATOR_FOR_GROUP', 'GROUP_COORDINATOR_NOT_AVAILABLE', 'GROUP_LOAD_IN_PROGRESS']);
/** How often the coordinator is looked for again while it has moved or is loading. */
export const COORDINATOR_RETRY_MS = 250;

/** How long a moved coordinator is looked for before kafkajs is left to rejoin. */
export function searchLimitMs(sessionTimeoutMs: number): number {
  return Math.max(2 * sessionTimeoutMs, 30_000);
}

type BrokerError = Error & { broker?: string; type?: string };
interface KafkajsLogger { warn(message: string, extra?: Record<string, unknown>): void; info(message: string, extra?: Record<string, unknown>): void }
interface ConsumerGroupInternals {
  groupId: string;
  memberId: string | null;
  sessionTimeout: number;
  /** For tests: how long the search lasts (searchLimitMs of the session timeout otherwise). */
  searchLimitMs?: number;
  logger: KafkajsLogger;
  coordinator: unknown;
  cluster: { findGroupCoordinator(options: { groupId: string }): Promise<unknown> };
  heartbeat(options: { interval: number }): Promise<void>;
}

const hooks = new Map<string, () => Promise<void>>();
/** One run of the hook per rebalance, however many heartbeats (kafkajs's and the handler's) learn of it. */
const running = new WeakMap<object, Promise<void>>();
/** One search for a moved coordinator per consumer group, however many heartbeats fail meanwhile. */
const searching = new WeakMap<object, Promise<void>>();
const installed = Symbol.for('switchyard.kafkajs.heartbeat');

/** Runs `hook` (errors ignored) before a consumer of `groupId` in this process rejoins its rebalancing group. Returns the unregistration. */
export function beforeRejoining(groupId: string, hook: () => Promise<void>): () => void {
  hooks.set(groupId, hook);
  return () => { if (hooks.get(groupId) === hook) hooks.delete(groupId); };
}

/** The group's hook, once for all the heartbeats of this consumer group that learn of the same rebalance. */
function runRejoinHook(group: ConsumerGroupInternals): Promise<void> | undefined {
  const hook = hooks.get(group.groupId);
  if (!hook) return undefined;
  let run = running.get(group);
  if (!run) {
    run = hook().catch(() => undefined).finally(() => running.delete(group));
    running.set(group, run);
  }
  return run;
}

function coordinatorMoved(error: BrokerError): boolean {
  return UNREACHABLE_BROKER_ERRORS.has(error.name) || COORDINATOR_MOVED.has(error.type ?? '');
}

/**
 * Finds the group's coordinator again and heartbeats there (branch 1 above); resolves once a
 * heartbeat went through, rejects with what kafkajs must act on otherwise.
 */
function heartbeatOnNewCoordinator(group: ConsumerGroupInternals, heartbeat: ConsumerGroupInternals['heartbeat'], first: BrokerError, createErrorFromCode: (code: number) => Error): Promise<void> {
  let search = searching.get(group);
  if (search) return search;
  search = (async () => {
    group.logger.warn('The group coordinator moved or cannot be reached: finding it again, the member heartbeats on', { groupId: group.groupId, broker: first.broker, error: first.message });
    const deadline = Date.now() + (group.searchLimitMs ?? searchLimitMs(group.sessionTimeout));
    while (Date.now() < deadline) {
      await sleep(COORDINATOR_RETRY_MS);
      try {
        // kafkajs's lookup retries for as long as its client's retry allows: bounded here by the deadline.
        group.coordinator = await withDeadline(group.cluster.findGroupCoordinator({ groupId: group.groupId }), deadline);
        await heartbeat.call(group, { interval: 0 });
        group.logger.info('Heartbeating on the group coordinator found again', { groupId: group.groupId, memberId: group.memberId });
        return;
      } catch (err) {
        const error = err as BrokerError;
        if (error instanceof DeadlinePassed) break;
        if (coordinatorMoved(error)) continue;
        if (error.type === 'REBALANCE_IN_PROGRESS') await runRejoinHook(group);
        throw error;
      }
    }
    group.logger.warn('The group coordinator was not found in time: rejoining as the same member', { groupId: group.groupId });
    throw createErrorFromCode(NOT_COORDINATOR);
  })().finally(() => searching.delete(group));
  searching.set(group, search);
  return search;
}

class DeadlinePassed extends Error {}

function withDeadline<T>(work: Promise<T>, deadline: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => { timer = setTimeout(() => reject(new DeadlinePassed('deadline passed')), Math.max(0, deadline - Date.now())); });
  work.catch(() => undefined); // a lookup left behind settles on its own
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}

/** Patches kafkajs's ConsumerGroup.heartbeat (its module is shared by every consumer of this process). */
export function installHeartbeat(): void {
  const { prototype } = require('kafkajs/src/consumer/consumerGroup.js') as { prototype: ConsumerGroupInternals & { [installed]?: true } };
  const { createErrorFromCode } = require('kafkajs/src/protocol/error.js') as { createErrorFromCode(code: number): Error };
  if (prototype[installed]) return;
  const { heartbeat } = prototype;
  if (typeof heartbeat !== 'function') throw new Error('kafkajs ConsumerGroup has no heartbeat: the heartbeat correction no longer fits this kafkajs');
  prototype.heartbeat = async function (this: ConsumerGroupInternals, options) {
    try {
      await heartbeat.call(this, options);
    } catch (err) {
      const error = err as BrokerError;
      if (coordinatorMoved(error)) return heartbeatOnNewCoordinator(this, heartbeat, error, createErrorFromCode);
      if (error.type === 'REBALANCE_IN_PROGRESS') await runRejoinHook(this);
      throw error;
    }
  };
  prototype[installed] = true;
}
