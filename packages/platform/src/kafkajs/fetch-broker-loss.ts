// Correction to kafkajs 2.2.4: a fetch from a lost broker no longer crashes the whole consumer.
//
// Defect: ConsumerGroup.recoverFromFetch (src/consumer/consumerGroup.js) passes a connection error
// or request timeout from one partition leader's fetch out of every fetcher, so the runner retries
// the whole fetch loop until it gives up and the consumer crashes. Related upstream report:
// https://github.com/tulios/kafkajs/issues/939 (one broker shut down ends the consumer).
// Before: a broker lost without a clean shutdown (SIGKILL, not yet fenced by the controller) that
// led some partitions crashed every consumer of the group; each started again under a new member
// id, every partition stopped, the group rebalanced around members it had to wait out, and what the
// old members had finished and not committed was sent again by the partitions' next owners (the
// cluster fault suite's broker and controller kills paused deliveries for 17-22 s this way).
// After: only that broker's partitions wait: its fetch ends empty after UNREACHABLE_RETRY_MS and is
// tried again (kafkajs refreshes the metadata whenever it cannot reach a broker, so a newly elected
// leader is found) while the other fetchers go on. Any other error still goes to kafkajs.
// The same loss seen by the heartbeat (the lost broker was the group's coordinator) is heartbeat.ts.
// Reproduced by: fetch-broker-loss.test.ts; in a cluster by test/faults-cluster.test.ts.
// Installed by install.ts: ConsumerGroup.prototype.recoverFromFetch wrapped.
import { createRequire } from 'node:module';
import { setTimeout as sleep } from 'node:timers/promises';

const require = createRequire(import.meta.url);

/** How long a fetcher whose broker cannot be reached waits before it tries again. */
const UNREACHABLE_RETRY_MS = 500;

/** Errors of a broker that cannot be reached; a closed connection kafkajs already handles itself. */
export const UNREACHABLE_BROKER_ERRORS: ReadonlySet<string> = new Set(['KafkaJSConnectionError', 'KafkaJSRequestTimeoutError']);

type BrokerError = Error & { broker?: string };
interface KafkajsLogger { warn(message: string, extra?: Record<string, unknown>): void }
interface ConsumerGroupInternals {
  groupId: string;
  logger: KafkajsLogger;
  recoverFromFetch(error: BrokerError): Promise<void>;
}

const installed = Symbol.for('switchyard.kafkajs.fetchBrokerLoss');

/** Patches kafkajs's ConsumerGroup (its module is shared by every consumer of this process). */
export function installFetchBrokerLoss(): void {
  const { prototype } = require('kafkajs/src/consumer/consumerGroup.js') as { prototype: ConsumerGroupInternals & { [installed]?: true } };
  if (prototype[installed]) return;
  const { recoverFromFetch } = prototype;
  if (typeof recoverFromFetch !== 'function') {
    throw new Error('kafkajs ConsumerGroup has no recoverFromFetch: the fetch broker-loss correction no longer fits this kafkajs');
  }
  prototype.recoverFromFetch = async function (this: ConsumerGroupInternals, error) {
    if (!UNREACHABLE_BROKER_ERRORS.has(error.name)) return recoverFromFetch.call(this, error);
    this.logger.warn('A broker cannot be reached: its partitions wait, the others are fetched', { groupId: this.groupId, broker: error.broker, error: error.message });
    await sleep(UNREACHABLE_RETRY_MS);
  };
  prototype[installed] = true;
}
