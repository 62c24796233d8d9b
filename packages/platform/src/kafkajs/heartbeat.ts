// Correction to kafkajs 2.2.4: the one wrapper of ConsumerGroup.heartbeat. It corrects two things
// a heartbeat learns, each in its own branch below.
//
// 1. The coordinator cannot be reached.
//    Defect: ConsumerGroup.heartbeat (src/consumer/consumerGroup.js) lets a connection error or
//    request timeout from the coordinator through as it is; kafkajs keeps the dead coordinator and
//    the runner's retries end in a crash. Related upstream reports:
//    https://github.com/tulios/kafkajs/issues/939 and https://github.com/tulios/kafkajs/issues/1011
//    (the consumer crashes with "Not connected" from Broker.heartbeat).
//    Before: a lost broker that was the group's coordinator crashed every consumer of the group,
//    which started again under new member ids (partitions stopped, a rebalance, finished work not
//    yet committed sent again by the next owners).
//    After: the error is answered as NOT_COORDINATOR, on which kafkajs's runner finds the
//    coordinator again and rejoins under the same member id, which the new coordinator knows from
//    the group's stored state, so the members keep their partitions.
//    Reproduced by: heartbeat.test.ts ("a heartbeat that cannot reach the coordinator ...");
//    in a cluster by test/faults-cluster.test.ts.
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
import { UNREACHABLE_BROKER_ERRORS } from './fetch-broker-loss.js';

const require = createRequire(import.meta.url);

/** kafkajs's NOT_COORDINATOR error code: its runner rejoins (finding the coordinator again) on it. */
const NOT_COORDINATOR = 16;

type BrokerError = Error & { broker?: string; type?: string };
interface KafkajsLogger { warn(message: string, extra?: Record<string, unknown>): void }
interface ConsumerGroupInternals {
  groupId: string;
  logger: KafkajsLogger;
  heartbeat(options: { interval: number }): Promise<void>;
}

const hooks = new Map<string, () => Promise<void>>();
/** One run of the hook per rebalance, however many heartbeats (kafkajs's and the handler's) learn of it. */
const running = new WeakMap<object, Promise<void>>();
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
      if (UNREACHABLE_BROKER_ERRORS.has(error.name)) {
        this.logger.warn('The group coordinator cannot be reached: finding it again and rejoining as the same member', { groupId: this.groupId, broker: error.broker, error: error.message });
        throw createErrorFromCode(NOT_COORDINATOR);
      }
      if (error.type === 'REBALANCE_IN_PROGRESS') await runRejoinHook(this);
      throw error;
    }
  };
  prototype[installed] = true;
}
