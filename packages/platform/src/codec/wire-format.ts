import { CodecError } from '../errors.js';

/**
 * The Confluent wire format: magic byte 0, a 4-byte big-endian schema id, then the Avro binary
 * body. Pure functions, no registry.
 */
export const MAGIC_BYTE = 0;
export const HEADER_LENGTH = 5;

export function frame(schemaId: number, body: Buffer): Buffer {
  const out = Buffer.allocUnsafe(HEADER_LENGTH + body.length);
  out.writeUInt8(MAGIC_BYTE, 0);
  out.writeUInt32BE(schemaId, 1);
  body.copy(out, HEADER_LENGTH);
  return out;
}

export function readFrame(value: Buffer | null | undefined): { schemaId: number; body: Buffer } {
  if (!value || value.length < HEADER_LENGTH) {
    throw new CodecError('CODEC_BAD_FRAME', `record value of ${value?.length ?? 0} bytes is shorter than the ${HEADER_LENGTH}-byte Confluent header`);
  }
  if (value.readUInt8(0) !== MAGIC_BYTE) {
    throw new CodecError('CODEC_BAD_FRAME', `record value starts with byte ${value.readUInt8(0)}, not the Confluent magic byte 0`);
  }
  return { schemaId: value.readUInt32BE(1), body: value.subarray(HEADER_LENGTH) };
}
