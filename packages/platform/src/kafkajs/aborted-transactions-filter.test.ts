import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { describe, it } from 'node:test';
import { withoutAbortedRecords } from './aborted-transactions-filter.js';
import './index.js';

type Batch = { messages: Array<{ offset: string }> };
const require = createRequire(import.meta.url);
const Batch = require('kafkajs/src/consumer/batch.js') as new (topic: string, fetchedOffset: string, partitionData: unknown) => Batch;

const record = (offset: number, producerId: number, inTransaction = true) => ({ offset: String(offset), key: Buffer.from('k'), value: Buffer.from('v'), isControlRecord: false, batchContext: { producerId: String(producerId), inTransaction } });
const abortMarker = (offset: number, producerId: number) => ({ offset: String(offset), key: Buffer.from([0, 0, 0, 0]), value: Buffer.alloc(6), isControlRecord: true, batchContext: { producerId: String(producerId), inTransaction: true } });
const commitMarker = (offset: number, producerId: number) => ({ ...abortMarker(offset, producerId), key: Buffer.from([0, 0, 0, 1]) });

// The log of the pause test, shortened: producer 26's transaction began at 143 and was aborted at 736
// (by the new owner's fence); producer 25's began later and was aborted first. The broker lists the
// aborted transactions in the order they ended: 25, then 26.
const partitionData = {
  partition: 2, highWatermark: '800', abortedTransactions: [{ producerId: '25', firstOffset: '500' }, { producerId: '26', firstOffset: '143' }],
  messages: [record(140, 22), commitMarker(141, 22), record(143, 26), record(144, 26), record(145, 26), record(146, 27), commitMarker(147, 27), record(500, 25), record(501, 25), abortMarker(600, 25), record(601, 27), abortMarker(736, 26), record(737, 26)],
};

describe("kafkajs's aborted-record filter, replaced", () => {
  it('kafkajs batches drop every record of an aborted transaction, whatever order the broker lists them in', () => {
    const batch = new Batch('t', '140', partitionData);
    assert.deepEqual(batch.messages.map((m) => m.offset), ['140', '146', '601', '737']);
  });

  it('the filter alone: records of aborted transactions go, the markers stay (kafkajs drops control records after it), a producer counts again after its abort marker', () => {
    const kept = withoutAbortedRecords(partitionData).map((m) => m.offset);
    assert.deepEqual(kept, ['140', '141', '146', '147', '600', '601', '736', '737']);
  });

  it('records outside a transaction and with no aborted transaction listed pass untouched', () => {
    const messages = [record(1, 9, false), record(2, 9)];
    assert.equal(withoutAbortedRecords({ messages, abortedTransactions: [] }), messages);
    assert.deepEqual(withoutAbortedRecords({ messages, abortedTransactions: [{ producerId: '9', firstOffset: '0' }] }).map((m) => m.offset), ['1']);
  });
});
