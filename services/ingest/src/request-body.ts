import { promisify } from 'node:util';
import { brotliDecompress, gunzip, inflate } from 'node:zlib';
import sjson from 'secure-json-parse';
import { trackingErrors } from './tracking-errors.js';

/** Limits of the tracking API (docs/decisions/0002-tracking-api-limits-and-rejections.md). */
export const MAX_REQUEST_BYTES = 500 * 1024;
export const MAX_JSON_DEPTH = 64;
/**
 * What one request may write to Kafka after enrichment (ids, times, the source, batch-level context
 * merged into every call). Under the broker's default 1 MiB per record batch with room for record
 * overhead, so a request always fits in one produce batch; and it stops a small body with a large
 * batch-level context and thousands of tiny calls from turning into hundreds of megabytes.
 */
export const MAX_WRITE_BYTES = 768 * 1024;

const decoders = {
  gzip: promisify(gunzip),
  'x-gzip': promisify(gunzip),
  deflate: promisify(inflate),
  br: promisify(brotliDecompress),
} as const;

/**
 * The request body as JSON text: decompressed when Content-Encoding says so, never larger than
 * 500 KB whatever the compression (a gzip bomb stops at the limit: zlib refuses to produce more).
 */
export async function decodeBody(raw: Buffer, contentEncoding: string | undefined): Promise<Buffer> {
  const encoding = (contentEncoding ?? 'identity').trim().toLowerCase();
  if (encoding === 'identity' || encoding === '') return raw;
  const decode = decoders[encoding as keyof typeof decoders];
  if (!decode) throw trackingErrors.error('UNSUPPORTED_ENCODING', { encoding });
  try {
    return await decode(raw, { maxOutputLength: MAX_REQUEST_BYTES });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE' || err instanceof RangeError) {
      throw trackingErrors.error('BODY_TOO_LARGE', { limitBytes: MAX_REQUEST_BYTES, decompressed: true });
    }
    throw trackingErrors.error('INVALID_ENCODING', { encoding });
  }
}

// JSON text is UTF-8 (RFC 8259). Decoding leniently would turn invalid bytes into U+FFFD and store
// data the client never sent; refusing says what is wrong. A leading BOM is skipped.
const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Parses JSON without letting input shape objects' prototypes (`__proto__` and
 * `constructor.prototype` keys are dropped) and refuses nesting deeper than MAX_JSON_DEPTH, which
 * no analytics call needs and which would make later stringify/merge steps recurse deeply.
 */
export function parseJsonBody(bytes: Buffer): unknown {
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch {
    throw trackingErrors.error('INVALID_UTF8');
  }
  let value: unknown;
  try {
    value = sjson.parse(text, undefined, { protoAction: 'remove', constructorAction: 'remove' });
  } catch (err) {
    throw trackingErrors.error('INVALID_JSON', { problem: (err as Error).message.slice(0, 200) });
  }
  if (depthExceeds(value, MAX_JSON_DEPTH)) throw trackingErrors.error('NESTING_TOO_DEEP', { maxDepth: MAX_JSON_DEPTH });
  return value;
}

function depthExceeds(root: unknown, max: number): boolean {
  const stack: Array<[unknown, number]> = [[root, 1]];
  while (stack.length > 0) {
    const [value, depth] = stack.pop()!;
    if (typeof value !== 'object' || value === null) continue;
    if (depth > max) return true;
    for (const child of Array.isArray(value) ? value : Object.values(value)) {
      if (typeof child === 'object' && child !== null) stack.push([child, depth + 1]);
    }
  }
  return false;
}

/**
 * The write key: the user name of HTTP Basic auth (with or without the colon, empty password),
 * or `writeKey` in the body (browsers' text/plain requests cannot set headers without a preflight).
 */
export function writeKeyOf(authorization: string | undefined, body: unknown): string | undefined {
  const basic = authorization && /^Basic\s+(.+)$/i.exec(authorization.trim());
  if (basic) {
    const decoded = Buffer.from(basic[1]!, 'base64').toString('utf8');
    const user = decoded.includes(':') ? decoded.slice(0, decoded.indexOf(':')) : decoded;
    if (user) return user;
  }
  const fromBody = typeof body === 'object' && body !== null ? (body as { writeKey?: unknown }).writeKey : undefined;
  return typeof fromBody === 'string' && fromBody ? fromBody : undefined;
}
