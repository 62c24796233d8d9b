import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { encodeRecord, recordBatch, type RecordBatchFields, type RecordFields } from './record-batch-encoder.js';

// Not importing ./index.js: these requires get kafkajs's own modules, uncorrected.
const require = createRequire(import.meta.url);
type Encoded = { buffer: Buffer };
const theirRecord = require('kafkajs/src/protocol/recordBatch/record/v0/index.js') as (fields: RecordFields) => Encoded;
const { RecordBatch: theirBatch } = require('kafkajs/src/protocol/recordBatch/v0/index.js') as { RecordBatch(fields: object): Promise<Encoded> };
const decodeBatch = require('kafkajs/src/protocol/recordBatch/v0/decoder.js') as (decoder: object) => Promise<{ records: Array<{ key: Buffer | null; value: Buffer | null; headers: Record<string, Buffer | Buffer[]>; timestamp: string }> }>;
const Decoder = require('kafkajs/src/protocol/decoder.js') as new (buffer: Buffer) => object;
const Long = require('kafkajs/src/utils/long.js') as { fromValue(value: unknown): unknown };

const bytes = fc.oneof(fc.constant(null), fc.string({ unit: 'grapheme', maxLength: 40 }), fc.uint8Array({ maxLength: 300 }).map((a) => Buffer.from(a)));
const headerValue = fc.oneof(fc.string({ maxLength: 20 }), fc.uint8Array({ maxLength: 20 }).map((a) => Buffer.from(a)));
const fields: fc.Arbitrary<RecordFields> = fc.record({
  offsetDelta: fc.nat({ max: 1_000_000 }),
  timestampDelta: fc.oneof(fc.integer({ min: -1000, max: 100_000 }), fc.maxSafeInteger(), fc.integer({ min: Number.MIN_SAFE_INTEGER, max: 0 })),
  key: bytes,
  value: fc.oneof(bytes, fc.uint8Array({ minLength: 400, maxLength: 3000 }).map((a) => Buffer.from(a))),
  headers: fc.option(fc.dictionary(fc.string({ minLength: 1, maxLength: 12 }), fc.oneof(headerValue, fc.array(headerValue, { maxLength: 3 }))), { nil: undefined }),
}, { requiredKeys: ['key', 'value'] });
const int64 = fc.oneof(fc.integer({ min: -1, max: 2 ** 31 }), fc.maxSafeInteger(), fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }).map(String));
const batchFields: fc.Arbitrary<Omit<RecordBatchFields, 'records'>> = fc.record({
  compression: fc.constantFrom(0, 1),
  firstTimestamp: int64,
  maxTimestamp: int64,
  partitionLeaderEpoch: fc.integer({ min: -1, max: 1000 }),
  transactional: fc.boolean(),
  producerId: fc.oneof(int64, int64.map((v) => Long.fromValue(v))),
  producerEpoch: fc.integer({ min: -1, max: 32767 }),
  firstSequence: fc.integer({ min: -1, max: 2 ** 31 - 1 }),
}, { requiredKeys: ['firstTimestamp', 'maxTimestamp'] }); // their defaults are Date.now(), different in two calls

describe('kafkajs record batches, each written once at its exact size', () => {
  it("records are kafkajs's own bytes, for any key, value, headers and deltas", () => {
    fc.assert(fc.property(fields, (f) => {
      const ours = encodeRecord(f);
      assert.equal(ours.buf.length, ours.offset, 'no spare room');
      assert.deepEqual(ours.buf, theirRecord(f).buffer);
    }), { numRuns: 2000 });
  });

  it("batches are kafkajs's own bytes (checksum included), uncompressed and gzipped", async () => {
    await fc.assert(fc.asyncProperty(fc.array(fields, { maxLength: 20 }), batchFields, async (messages, f) => {
      const args = { ...f, lastOffsetDelta: messages.length - 1 };
      const ours = await recordBatch({ ...args, records: messages.map(encodeRecord) });
      const theirs = await theirBatch({ ...args, records: messages.map(theirRecord) });
      assert.equal(ours.buf.length, ours.offset);
      assert.deepEqual(ours.buf, theirs.buffer);
    }), { numRuns: 300 });
  });

  it("decode with kafkajs's own decoder (a task-sized record, headers, a null key)", async () => {
    const messages: RecordFields[] = [
      { key: 'dest-1:user-1', value: Buffer.alloc(900, 7) },
      { key: null, value: 'hello', headers: { 'x-origin': 'ingest', multi: ['a', Buffer.from('b')] } },
    ];
    const records = messages.map((m, i) => encodeRecord({ ...m, offsetDelta: i, timestampDelta: i * 3 }));
    const batch = await recordBatch({ records, lastOffsetDelta: 1, firstTimestamp: 1_700_000_000_000, maxTimestamp: 1_700_000_000_003 });
    const decoded = await decodeBatch(new Decoder(batch.buf));
    assert.equal(decoded.records[0]!.key!.toString(), 'dest-1:user-1');
    assert.deepEqual(decoded.records[0]!.value, Buffer.alloc(900, 7));
    assert.equal(decoded.records[1]!.key, null);
    assert.equal(decoded.records[1]!.value!.toString(), 'hello');
    assert.equal(decoded.records[1]!.headers['x-origin']!.toString(), 'ingest');
    assert.deepEqual((decoded.records[1]!.headers['multi'] as Buffer[]).map(String), ['a', 'b']);
    assert.equal(decoded.records[1]!.timestamp, '1700000000003');
  });
});
