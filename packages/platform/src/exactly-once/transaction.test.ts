import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Producer } from '../kafkajs/index.js';
import { commitInTransaction, produceChunks, type TransactionRecord } from './transaction.js';

const rec = (i: number, valueBytes: number): TransactionRecord => ({ topic: 'state', partition: 0, key: `user-${i}`, value: Buffer.alloc(valueBytes, 1) });

test('produceChunks: small records go 500 to a request, in order', () => {
  const records = Array.from({ length: 1201 }, (_, i) => rec(i, 100));
  const chunks = produceChunks(records);
  assert.deepEqual(chunks.map((c) => c.length), [500, 500, 201]);
  assert.deepEqual(chunks.flat(), records);
});

test('produceChunks: large records to one partition stay under 512 KiB a request, far below the broker\'s 1 MB', () => {
  // 500 user states of 3 KB to one changelog partition: 1.5 MB in one record batch, which the broker refuses.
  const records = Array.from({ length: 500 }, (_, i) => rec(i, 3000));
  const chunks = produceChunks(records);
  assert.ok(chunks.length >= 3, `${chunks.length} chunks`);
  for (const c of chunks) assert.ok(c.reduce((n, r) => n + r.key!.length + r.value!.length, 0) <= 512 * 1024);
  assert.deepEqual(chunks.flat(), records);
});

test('produceChunks: a record above the cap goes alone (the broker judges it), nothing is dropped; none gives none', () => {
  const records = [rec(0, 10), rec(1, 600 * 1024), rec(2, 10)];
  assert.deepEqual(produceChunks(records).map((c) => c.map((r) => r.key)), [['user-0'], ['user-1'], ['user-2']]);
  assert.deepEqual(produceChunks([]), []);
});

test('commitInTransaction: one sendBatch per chunk, then the offsets, then commit; a failed send aborts and rethrows', async () => {
  const log: string[] = [];
  let failSend = false;
  const producer = {
    transaction: async () => ({
      sendBatch: async ({ topicMessages }: { topicMessages: Array<{ messages: unknown[] }> }) => {
        if (failSend) throw new Error('The request included a message larger than the max message size the server will accept');
        log.push(`send ${topicMessages[0]!.messages.length}`);
      },
      sendOffsets: async () => { log.push('offsets'); },
      commit: async () => { log.push('commit'); },
      abort: async () => { log.push('abort'); },
    }),
  } as unknown as Producer;
  await commitInTransaction(producer, Array.from({ length: 400 }, (_, i) => rec(i, 3000)), [{ groupId: 'g', topic: 'in', partition: 0, offset: '10' }]);
  assert.deepEqual(log, ['send 172', 'send 172', 'send 56', 'offsets', 'commit']);
  log.length = 0;
  failSend = true;
  await assert.rejects(commitInTransaction(producer, [rec(0, 10)]), /larger than the max message size/);
  assert.deepEqual(log, ['abort']);
});
