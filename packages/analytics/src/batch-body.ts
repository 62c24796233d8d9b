import { LIBRARY_NAME, LIBRARY_VERSION } from './version.js';

/**
 * The body of POST /v1/batch, built from messages already serialised at call time, and the split
 * of a flush into requests under the server's 500 KB limit. Pure.
 */
export const MAX_BODY_BYTES = 500 * 1024;

/** Batch-level context; the server merges it into every message (a message's own keys win). */
const CONTEXT_JSON = JSON.stringify({ library: { name: LIBRARY_NAME, version: LIBRARY_VERSION } });

/** `sentAt` is set per attempt so the server's clock-skew correction uses the real send time. */
export function batchBody(jsons: readonly string[], sentAt: Date): string {
  return `{"batch":[${jsons.join(',')}],"sentAt":${JSON.stringify(sentAt.toISOString())},"context":${CONTEXT_JSON}}`;
}

/** Bytes of a body with no messages (toISOString has a fixed width, so any date measures it). */
export const ENVELOPE_BYTES = Buffer.byteLength(batchBody([], new Date(0)), 'utf8');

/** Bytes of the body holding messages of these sizes: the envelope, the messages, the commas. */
export function bodyBytes(messageBytes: readonly number[]): number {
  return ENVELOPE_BYTES + messageBytes.reduce((sum, b) => sum + b, 0) + Math.max(0, messageBytes.length - 1);
}

/** Splits in order, greedily, so no body exceeds maxBodyBytes; a message too big alone still gets its own batch. */
export function splitIntoBatches<T extends { bytes: number }>(entries: readonly T[], maxBodyBytes = MAX_BODY_BYTES): T[][] {
  const batches: T[][] = [];
  let current: T[] = [];
  let size = ENVELOPE_BYTES;
  for (const entry of entries) {
    const added = entry.bytes + (current.length > 0 ? 1 : 0);
    if (current.length > 0 && size + added > maxBodyBytes) {
      batches.push(current);
      current = [];
      size = ENVELOPE_BYTES;
      size += entry.bytes;
    } else {
      size += added;
    }
    current.push(entry);
  }
  if (current.length > 0) batches.push(current);
  return batches;
}
