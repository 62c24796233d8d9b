// Correction to kafkajs 2.2.4: a transaction refused with CONCURRENT_TRANSACTIONS is tried again
// within milliseconds, not after the client's whole retry time.
//
// Defect: a transaction started right after the previous one's commit is refused with
// CONCURRENT_TRANSACTIONS while the coordinator still writes that commit's markers, and kafkajs
// (src/producer/eosManager) retries the whole step after its client's retry time. Upstream:
// https://github.com/tulios/kafkajs/issues/304 ("Unnecessarily long delay after
// CONCURRENT_TRANSACTIONS", open); the Java client lowered its backoff for the same answer in
// https://github.com/apache/kafka/pull/3377 (KAFKA-5477).
// Before: 47 of 150 back-to-back transactions against one idle broker were refused (a few even
// 200 ms apart), each costing 200-300 ms by default, 10 ms and up for the exactly-once stages'
// transactional client (pipeline.ts, TRANSACTION_RETRY); kafkajs logged every refusal as an error.
// After: the refused AddPartitionsToTxn or AddOffsetsToTxn alone is sent again after 2, 5, 10, 20 ...
// ms (CONCURRENT_RETRY_MS, 757 ms in all), as the Java client does; if it is still refused,
// kafkajs's own retry takes over as before. kafka/client.ts logs the refusal at debug
// (CONCURRENT_TRANSACTIONS_MESSAGE).
// Reproduced by: concurrent-transactions-retry.test.ts.
// Installed by install.ts: Broker.prototype.addPartitionsToTxn and addOffsetsToTxn wrapped.
import { createRequire } from 'node:module';
import { setTimeout as sleep } from 'node:timers/promises';

const require = createRequire(import.meta.url);

/**
 * The text of kafkajs's CONCURRENT_TRANSACTIONS error (the coordinator is still completing this id's
 * previous transaction). kafkajs logs every such answer as an error; retried here, it is routine
 * (kafka/client.ts logs it at debug).
 */
export const CONCURRENT_TRANSACTIONS_MESSAGE = (require('kafkajs/src/protocol/error.js') as { createErrorFromCode(code: number): Error }).createErrorFromCode(51).message;
/** Waits between quick tries of a refused AddPartitionsToTxn / AddOffsetsToTxn; after them kafkajs's own retry takes over. */
const CONCURRENT_RETRY_MS = [2, 5, 10, 20, 20, 50, 50, 100, 100, 200, 200];
/** The requests a transaction sends while the previous one's markers may still be being written. */
const QUICK_RETRY_REQUESTS = ['addPartitionsToTxn', 'addOffsetsToTxn'] as const;

const installed = Symbol.for('switchyard.kafkajs.concurrentTransactionsRetry');

/** The coordinator refused the request because it is still completing this id's previous transaction. */
export function isConcurrentTransactions(err: unknown): boolean {
  return (err as { type?: string }).type === 'CONCURRENT_TRANSACTIONS';
}

/** Retries a request the coordinator refused with CONCURRENT_TRANSACTIONS, quickly, then lets the error through. */
export async function retryConcurrentTransactions<T>(send: () => Promise<T>, waits: readonly number[] = CONCURRENT_RETRY_MS): Promise<T> {
  for (let i = 0; ; i++) {
    try {
      return await send();
    } catch (err) {
      if (!isConcurrentTransactions(err) || i >= waits.length) throw err;
      await sleep(waits[i]!);
    }
  }
}

/** Patches kafkajs's Broker (shared by every client of this process). */
export function installConcurrentTransactionsRetry(): void {
  const Broker = require('kafkajs/src/broker/index.js') as { prototype: Record<string, unknown> & { [installed]?: true } };
  const broker = Broker.prototype;
  if (broker[installed]) return;
  const missing = QUICK_RETRY_REQUESTS.filter((name) => typeof broker[name] !== 'function');
  if (missing.length) throw new Error(`kafkajs Broker lacks ${missing.join(', ')}: the CONCURRENT_TRANSACTIONS retry no longer fits this kafkajs`);
  for (const name of QUICK_RETRY_REQUESTS) {
    const request = broker[name] as (this: unknown, ...args: unknown[]) => Promise<unknown>;
    broker[name] = function (this: unknown, ...args: unknown[]) {
      return retryConcurrentTransactions(() => request.apply(this, args));
    };
  }
  broker[installed] = true;
}
