// A consumer of kafkajs learns that its group is rebalancing from a heartbeat answered
// REBALANCE_IN_PROGRESS, and rejoins at once: kafkajs has no "partitions revoked" callback. A
// member that commits its own offsets (delivery: as tasks finish) then has its last commits refused
// once the new generation exists, and each partition that moves is read again by its new owner from
// an offset behind what was already delivered. Until the member rejoins the group waits for it, and
// its commits under the old generation are still accepted: a hook registered for the group runs
// there (commit what is finished), then kafkajs rejoins.
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

interface ConsumerGroupInternals {
  groupId: string;
  heartbeat(options: { interval: number }): Promise<void>;
}

const hooks = new Map<string, () => Promise<void>>();
/** One run of the hook per rebalance, however many heartbeats (kafkajs's and the handler's) learn of it. */
const running = new WeakMap<object, Promise<void>>();
const installed = Symbol.for('switchyard.kafkajs.rejoinHook');

/** Runs `hook` (errors ignored) before a consumer of `groupId` in this process rejoins its rebalancing group. Returns the unregistration. */
export function beforeRejoining(groupId: string, hook: () => Promise<void>): () => void {
  hooks.set(groupId, hook);
  return () => { if (hooks.get(groupId) === hook) hooks.delete(groupId); };
}

/** Patches kafkajs's ConsumerGroup.heartbeat (after the broker-loss patch, whose errors it passes on). */
export function installRejoinHook(): void {
  const { prototype } = require('kafkajs/src/consumer/consumerGroup.js') as { prototype: ConsumerGroupInternals & { [installed]?: true } };
  if (prototype[installed]) return;
  const { heartbeat } = prototype;
  prototype.heartbeat = async function (this: ConsumerGroupInternals, options) {
    try {
      await heartbeat.call(this, options);
    } catch (err) {
      const hook = hooks.get(this.groupId);
      if (hook && (err as { type?: string }).type === 'REBALANCE_IN_PROGRESS') {
        let run = running.get(this);
        if (!run) {
          run = hook().catch(() => undefined).finally(() => running.delete(this));
          running.set(this, run);
        }
        await run;
      }
      throw err;
    }
  };
  prototype[installed] = true;
}
