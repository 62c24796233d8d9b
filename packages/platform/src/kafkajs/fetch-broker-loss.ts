// What kafkajs's consumer does when a broker is lost (SIGKILL, not yet fenced by the controller):
// every consumer of the group crashed and started again under a new member id, so every partition
// stopped, the group rebalanced around members it had to wait out, and what the old members had
// finished and not committed was sent again by the partitions' next owners. The cluster suite's
// broker and controller kills paused deliveries for 17-22 s this way. Two paths lead there:
//
// - A fetch from the lost broker (it led some partitions) threw out of every fetcher, and the runner
//   retried the whole fetch loop until it gave up. Here it costs only that broker's partitions: the
//   fetch ends empty after a moment and is tried again (kafkajs refreshes the metadata whenever it
//   cannot reach a broker, so a newly elected leader is found), while the other fetchers go on.
// - A heartbeat to the lost broker (it was the group's coordinator) failed the same way, and kafkajs
//   kept the dead coordinator until the crash. Here it counts as "not the coordinator": the runner
//   finds the coordinator again and rejoins under the same member id, which the new coordinator
//   knows from the group's stored state, so the members keep their partitions.
import { createRequire } from 'node:module';
import { setTimeout as sleep } from 'node:timers/promises';

const require = createRequire(import.meta.url);

/** How long a fetcher whose broker cannot be reached waits before it tries again. */
const UNREACHABLE_RETRY_MS = 500;
/** kafkajs's NOT_COORDINATOR error code: its runner rejoins (finding the coordinator again) on it. */
const NOT_COORDINATOR = 16;

/** Errors of a broker that cannot be reached; a closed connection kafkajs already handles itself. */
const UNREACHABLE = new Set(['KafkaJSConnectionError', 'KafkaJSRequestTimeoutError']);

type BrokerError = Error & { broker?: string };
interface KafkajsLogger { warn(message: string, extra?: Record<string, unknown>): void }
interface ConsumerGroupInternals {
  groupId: string;
  logger: KafkajsLogger;
  recoverFromFetch(error: BrokerError): Promise<void>;
  heartbeat(options: { interval: number }): Promise<void>;
}

const installed = Symbol.for('switchyard.kafkajs.brokerLoss');

/** Patches kafkajs's ConsumerGroup (its module is shared by every consumer of this process). */
export function installBrokerLossRecovery(): void {
  const { prototype } = require('kafkajs/src/consumer/consumerGroup.js') as { prototype: ConsumerGroupInternals & { [installed]?: true } };
  const { createErrorFromCode } = require('kafkajs/src/protocol/error.js') as { createErrorFromCode(code: number): Error };
  if (prototype[installed]) return;
  const { recoverFromFetch, heartbeat } = prototype;
  if (typeof recoverFromFetch !== 'function' || typeof heartbeat !== 'function') {
    throw new Error('kafkajs ConsumerGroup has no recoverFromFetch or heartbeat: the broker-loss recovery no longer fits this kafkajs');
  }
  prototype.recoverFromFetch = async function (this: ConsumerGroupInternals, error) {
    if (!UNREACHABLE.has(error.name)) return recoverFromFetch.call(this, error);
    this.logger.warn('A broker cannot be reached: its partitions wait, the others are fetched', { groupId: this.groupId, broker: error.broker, error: error.message });
    await sleep(UNREACHABLE_RETRY_MS);
  };
  prototype.heartbeat = async function (this: ConsumerGroupInternals, options) {
    try {
      await heartbeat.call(this, options);
    } catch (err) {
      const error = err as BrokerError;
      if (!UNREACHABLE.has(error.name)) throw error;
      this.logger.warn('The group coordinator cannot be reached: finding it again and rejoining as the same member', { groupId: this.groupId, broker: error.broker, error: error.message });
      throw createErrorFromCode(NOT_COORDINATOR);
    }
  };
  prototype[installed] = true;
}
