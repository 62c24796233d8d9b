// kafkajs 2.2.4 (the last release) returns records of aborted transactions to read_committed
// consumers when the broker lists the aborted transactions of a fetch in another order than their
// first offsets. Its filter (src/consumer/filterAbortedMessages.js) compares each record only with
// the head of the list, so a transaction that began before the head's is never recognised: found by
// the fan-out pause test (issue 17), where a paused instance's open transaction, aborted ten seconds
// later by the partition's new owner, sat in the log before another producer's shorter aborted
// transaction; DumpLogSegments showed the ABORT marker, and both delivery and the test's reader
// still read the records. The broker orders the list by where each transaction ended, not began.
//
// The corrected filter below takes aborted transactions in order of first offset, as the Java
// consumer's priority queue does. kafka/kafkajs-fixes.ts puts it in place of kafkajs's module.

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
