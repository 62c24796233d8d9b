// kafkajs's consumer fetches from each broker in a fetcher of its own, but a fetch that cannot reach
// its broker (connection refused or timed out: a broker killed and not yet fenced by the
// controller) throws out of every fetcher: the runner retries the whole fetch loop five times over
// about six seconds, then crashes the consumer and starts it again under a new member id. Every
// partition stops, the group rebalances, and what the old member had finished and not committed is
// sent again by the partitions' next owners. The cluster suite's broker and controller kills paused
// deliveries for 19–22 s this way.
//
// Here an unreachable broker costs only its own partitions: the fetcher waits a moment and fetches
// again (kafkajs refreshes the metadata whenever it cannot reach a broker, so once a new leader is
// elected the partition is fetched from it), while the other fetchers go on.
import { createRequire } from 'node:module';
import { setTimeout as sleep } from 'node:timers/promises';

const require = createRequire(import.meta.url);

/** How long a fetcher whose broker cannot be reached waits before it tries again. */
const UNREACHABLE_RETRY_MS = 500;

/** Errors of a broker that cannot be reached; a closed connection kafkajs already handles itself. */
const UNREACHABLE = new Set(['KafkaJSConnectionError', 'KafkaJSRequestTimeoutError']);

interface KafkajsLogger { warn(message: string, extra?: Record<string, unknown>): void }
interface ConsumerGroupInternals {
  groupId: string;
  logger: KafkajsLogger;
  recoverFromFetch(error: Error & { broker?: string }): Promise<void>;
}

const installed = Symbol.for('switchyard.kafkajs.fetchRecovery');

/** Patches kafkajs's ConsumerGroup (its module is shared by every consumer of this process). */
export function installFetchRecovery(): void {
  const { prototype } = require('kafkajs/src/consumer/consumerGroup.js') as { prototype: ConsumerGroupInternals & { [installed]?: true } };
  if (prototype[installed]) return;
  const original = prototype.recoverFromFetch;
  if (typeof original !== 'function') throw new Error('kafkajs ConsumerGroup has no recoverFromFetch: the fetch recovery no longer fits this kafkajs');
  prototype.recoverFromFetch = async function recoverFromFetch(this: ConsumerGroupInternals, error) {
    if (!UNREACHABLE.has(error.name)) return original.call(this, error);
    this.logger.warn('A broker cannot be reached: its partitions wait, the others are fetched', { groupId: this.groupId, broker: error.broker, error: error.message });
    await sleep(UNREACHABLE_RETRY_MS);
  };
  prototype[installed] = true;
}
