// Correction to kafkajs 2.2.4: read_committed consumers no longer get records of aborted
// transactions.
//
// Defect: kafkajs's filter (src/consumer/filterAbortedMessages.js) compares each fetched record
// only with the head of the fetch's list of aborted transactions, so a transaction that began
// before the head's is never recognised. The broker orders that list by where each transaction
// ended, not where it began. No upstream issue or pull request found.
// Before: records of an aborted transaction were handed to the consumer whenever the broker listed
// it behind one that began later. Found by the fan-out pause test (test/fanout.test.ts): a paused
// instance's open transaction, aborted ten seconds later by the partition's new owner, sat in the
// log before another producer's shorter aborted transaction; DumpLogSegments showed the ABORT
// marker, and both delivery and the test's reader still read the records.
// After: aborted transactions are taken in order of first offset, as the Java consumer's priority
// queue does; a producer's records count again after its abort marker.
// Reproduced by: aborted-transactions-filter.test.ts ("kafkajs batches drop every record of an
// aborted transaction, whatever order the broker lists them in"); end to end by the SIGSTOP case
// of test/fanout.test.ts.
// Installed by install.ts: replaces kafkajs/src/consumer/filterAbortedMessages.js in Node's module
// cache. kafka/kafkajs-partition-source.ts uses the same filter for its own fetches.

interface FetchedMessage {
  offset: string;
  key: Buffer | null | undefined;
  batchContext: { producerId: string; inTransaction: boolean };
}

interface AbortedTransaction {
  producerId: string;
  firstOffset: string;
}

/** The abort marker's key: control record version 0, type 0 (ABORT). */
const ABORT_MARKER_KEY = Buffer.from([0, 0, 0, 0]);

/** The records of a fetched partition that are not part of an aborted transaction. */
export function withoutAbortedRecords<M extends FetchedMessage>({ messages, abortedTransactions }: { messages: M[]; abortedTransactions?: AbortedTransaction[] | null }): M[] {
  if (!abortedTransactions || abortedTransactions.length === 0) return messages;
  const pending = [...abortedTransactions].sort((a, b) => (BigInt(a.firstOffset) < BigInt(b.firstOffset) ? -1 : BigInt(a.firstOffset) > BigInt(b.firstOffset) ? 1 : 0));
  const aborted = new Set<string>();
  return messages.filter((message) => {
    const offset = BigInt(message.offset);
    while (pending.length && BigInt(pending[0]!.firstOffset) <= offset) aborted.add(String(pending.shift()!.producerId));
    const producerId = String(message.batchContext.producerId);
    if (message.key && Buffer.from(message.key).equals(ABORT_MARKER_KEY)) {
      aborted.delete(producerId); // its transaction is over: later records of the producer count again
      return true;
    }
    return !(message.batchContext.inTransaction && aborted.has(producerId));
  });
}
