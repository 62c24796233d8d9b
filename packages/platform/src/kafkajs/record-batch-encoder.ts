// Correction to kafkajs 2.2.4: produced records and record batches written once, at their exact size.
//
// Defect (cost, not correctness): kafkajs (src/protocol/recordBatch/record/v0 and
// recordBatch/v0) gives every record a fresh Encoder (a zero-filled 512-byte buffer, reallocated
// and copied for a record as large as a delivery task), a Buffer of its own to each varint
// (Buffer.from of a byte array), BigInt-backed 64-bit arithmetic to the timestamp delta and an
// Encoder to each header; the batch then copies every record into an Encoder that doubles as it
// grows, and copies the whole twice more. Related upstream report:
// https://github.com/tulios/kafkajs/issues/383 ("Large batches take exponentially longer to
// encode").
// Before: about 9 µs a task-sized record.
// After: each record written once at its exact size and the batch one buffer of its exact size,
// about 3 µs; the bytes are kafkajs's own.
// Reproduced by: record-batch-encoder.test.ts, which compares the bytes with kafkajs's own encoders
// and decodes them with kafkajs's decoder.
// Installed by install.ts: `encodeRecord` replaces kafkajs/src/protocol/recordBatch/record/v0/index.js
// and `recordBatchModule` replaces kafkajs/src/protocol/recordBatch/v0/index.js in Node's module cache.
import { createRequire } from 'node:module';
import { crc32c } from './crc32c.js';

const require = createRequire(import.meta.url);
const Encoder = require('kafkajs/src/protocol/encoder.js') as { prototype: object; new (): KafkajsEncoder };
const Long = require('kafkajs/src/utils/long.js') as { fromValue(value: unknown): { value: bigint } };
const { lookupCodec, COMPRESSION_CODEC_MASK, Types } = require('kafkajs/src/protocol/message/compression/index.js') as {
  lookupCodec(type: number): { compress(encoder: KafkajsEncoder): Promise<Buffer> } | null;
  COMPRESSION_CODEC_MASK: number;
  Types: { None: number };
};

type Bytes = Buffer | string | null | undefined;

/** The part of kafkajs's Encoder a record batch is read through (the produce request copies `buf` up to `offset`). */
interface KafkajsEncoder {
  buf: Buffer;
  offset: number;
  writeEncoderArray(encoders: KafkajsEncoder[]): KafkajsEncoder;
}

/** What kafkajs's produce request passes for each message (its fields plus the two deltas). */
export interface RecordFields {
  offsetDelta?: number;
  timestampDelta?: number;
  key?: Bytes;
  value?: Bytes;
  headers?: Record<string, Bytes | Bytes[]> | null;
}

/** Encoded bytes that kafkajs takes for one of its Encoders (instanceof included), without the constructor's allocation. */
class Encoded {
  constructor(readonly buf: Buffer, readonly offset: number) {}
}
Object.setPrototypeOf(Encoded.prototype, Encoder.prototype);

const asBuffer = (value: Bytes): Buffer | null => (value == null ? null : Buffer.isBuffer(value) ? value : Buffer.from(String(value), 'utf8'));

const zigZag = (value: number): number => (value << 1) ^ (value >> 31);

/** Bytes of an unsigned varint of a 32-bit value (kafkajs's loop: 7 bits at a time while any of the upper 25 are set). */
function sizeOfUVarInt(value: number): number {
  let bytes = 1;
  while ((value & 0xffffff80) !== 0) {
    bytes++;
    value >>>= 7;
  }
  return bytes;
}

/** The zig-zag form of a 64-bit delta as kafkajs computes it; a number when it fits 31 bits. */
function zigZag64(value: number): number | bigint {
  if (Number.isInteger(value) && value > -0x40000000 && value < 0x40000000) return zigZag(value) >>> 0;
  const long = Long.fromValue(value).value;
  return BigInt.asUintN(64, (long << 1n) ^ (long >> 63n));
}

function sizeOfUVarLong(value: number | bigint): number {
  if (typeof value === 'number') return sizeOfUVarInt(value);
  let bytes = 1;
  while (value >= 0x80n) {
    bytes++;
    value >>= 7n;
  }
  return bytes;
}

const sizeOfBytes = (value: Buffer | null): number => (value === null ? sizeOfUVarInt(zigZag(-1)) : sizeOfUVarInt(zigZag(value.length)) + value.length);

class Writer {
  offset = 0;
  constructor(readonly buf: Buffer) {}

  uvarint(value: number): void {
    while ((value & 0xffffff80) !== 0) {
      this.buf[this.offset++] = (value & 0x7f) | 0x80;
      value >>>= 7;
    }
    this.buf[this.offset++] = value & 0x7f;
  }

  uvarlong(value: number | bigint): void {
    if (typeof value === 'number') return this.uvarint(value);
    while (value >= 0x80n) {
      this.buf[this.offset++] = Number(value & 0x7fn) | 0x80;
      value >>= 7n;
    }
    this.buf[this.offset++] = Number(value);
  }

  varintBytes(value: Buffer | null): void {
    if (value === null) return this.uvarint(zigZag(-1));
    this.uvarint(zigZag(value.length));
    this.raw(value);
  }

  raw(bytes: Buffer): void {
    bytes.copy(this.buf, this.offset);
    this.offset += bytes.length;
  }

  int8(value: number): void { this.offset = this.buf.writeInt8(value, this.offset); }
  int16(value: number): void { this.offset = this.buf.writeInt16BE(value, this.offset); }
  int32(value: number): void { this.offset = this.buf.writeInt32BE(value, this.offset); }
  int64(value: unknown): void { this.offset = this.buf.writeBigInt64BE(BigInt.asIntN(64, Long.fromValue(value).value), this.offset); }
}

/** kafkajs's Record (recordBatch/record/v0): Length, Attributes, TimestampDelta, OffsetDelta, Key, Value, Headers. */
export function encodeRecord({ offsetDelta = 0, timestampDelta = 0, key, value, headers }: RecordFields): KafkajsEncoder {
  const keyBytes = asBuffer(key);
  const valueBytes = asBuffer(value);
  const headerBytes: Array<[Buffer, Buffer | null]> = [];
  if (headers) {
    for (const name of Object.keys(headers)) {
      const given = headers[name];
      for (const one of Array.isArray(given) ? given : [given]) headerBytes.push([Buffer.from(name, 'utf8'), asBuffer(one)]);
    }
  }
  const timestamp = zigZag64(timestampDelta);
  let bodySize = 1 + sizeOfUVarLong(timestamp) + sizeOfUVarInt(zigZag(offsetDelta)) + sizeOfBytes(keyBytes) + sizeOfBytes(valueBytes) + sizeOfUVarInt(zigZag(headerBytes.length));
  for (const [name, headerValue] of headerBytes) bodySize += sizeOfBytes(name) + sizeOfBytes(headerValue);

  const out = new Writer(Buffer.allocUnsafe(sizeOfUVarInt(zigZag(bodySize)) + bodySize));
  out.uvarint(zigZag(bodySize));
  out.int8(0); // attributes: none used
  out.uvarlong(timestamp);
  out.uvarint(zigZag(offsetDelta));
  out.varintBytes(keyBytes);
  out.varintBytes(valueBytes);
  out.uvarint(zigZag(headerBytes.length));
  for (const [name, headerValue] of headerBytes) {
    out.varintBytes(name);
    out.varintBytes(headerValue);
  }
  return new Encoded(out.buf, out.offset) as unknown as KafkajsEncoder;
}

/** kafkajs's RecordBatch arguments (recordBatch/v0). */
export interface RecordBatchFields {
  compression?: number;
  firstOffset?: unknown;
  firstTimestamp?: unknown;
  maxTimestamp?: unknown;
  partitionLeaderEpoch?: number;
  lastOffsetDelta?: number;
  transactional?: boolean;
  producerId?: unknown;
  producerEpoch?: number;
  firstSequence?: number;
  records?: KafkajsEncoder[];
}

const MAGIC_BYTE = 2;
const TRANSACTIONAL_MASK = 16;
/** Attributes … FirstSequence, then the record count: the checksummed part before the records. */
const BODY_HEADER = 2 + 4 + 8 + 8 + 8 + 2 + 4 + 4;
/** FirstOffset, Length, PartitionLeaderEpoch, Magic, CRC. */
const FRAME = 8 + 4 + 4 + 1 + 4;

/**
 * kafkajs's RecordBatch: FirstOffset, Length, PartitionLeaderEpoch, Magic, CRC-32C (of what follows),
 * Attributes, LastOffsetDelta, FirstTimestamp, MaxTimestamp, ProducerId, ProducerEpoch, FirstSequence,
 * Records; compressed records are one block after their count, as kafkajs writes them.
 */
export async function recordBatch({
  compression = Types.None, firstOffset = 0, firstTimestamp = Date.now(), maxTimestamp = Date.now(), partitionLeaderEpoch = 0,
  lastOffsetDelta = 0, transactional = false, producerId = -1, producerEpoch = 0, firstSequence = 0, records = [],
}: RecordBatchFields): Promise<KafkajsEncoder> {
  const codec = compression & COMPRESSION_CODEC_MASK;
  let blocks: Buffer[];
  if (compression === Types.None) {
    blocks = records.map((r) => (r.offset === r.buf.length ? r.buf : r.buf.subarray(0, r.offset)));
  } else {
    const all = new Encoder().writeEncoderArray(records);
    blocks = [await lookupCodec(compression)!.compress(all)];
  }
  let size = FRAME + BODY_HEADER;
  for (const block of blocks) size += block.length;

  const out = new Writer(Buffer.allocUnsafe(size));
  out.int64(firstOffset);
  out.int32(size - 12); // the bytes after FirstOffset and Length
  out.int32(partitionLeaderEpoch);
  out.int8(MAGIC_BYTE);
  const crcAt = out.offset;
  out.offset += 4;
  out.int16(codec | (transactional ? TRANSACTIONAL_MASK : 0));
  out.int32(lastOffsetDelta);
  out.int64(firstTimestamp);
  out.int64(maxTimestamp);
  out.int64(producerId);
  out.int16(producerEpoch);
  out.int32(firstSequence);
  out.int32(records.length);
  for (const block of blocks) out.raw(block);
  out.buf.writeUInt32BE(crc32c(out.buf.subarray(crcAt + 4)), crcAt);
  return new Encoded(out.buf, out.offset) as unknown as KafkajsEncoder;
}

/** The exports of kafkajs's recordBatch/v0 module. */
export const recordBatchModule = { RecordBatch: recordBatch, MAGIC_BYTE };
