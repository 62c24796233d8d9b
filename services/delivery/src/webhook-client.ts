import { createHmac } from 'node:crypto';
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { Agent, request } from 'undici';
import type { AddressPolicy } from '@switchyard/platform/net/address-policy';
import { parseRetryAfter, type AttemptResult } from './outcome.js';

/** X-Signature: lower-case hex HMAC-SHA1 of the exact body bytes, keyed by the shared secret. */
export function signature(body: Buffer, sharedSecret: string): string {
  return createHmac('sha1', sharedSecret).update(body).digest('hex');
}

export interface WebhookClientOptions {
  policy: AddressPolicy;
  /** The receiver must answer within this time (whole response); 5 s by the document. */
  timeoutMs: number;
  userAgent: string;
  /** Bytes of a response body kept for dead letters and logs. */
  excerptBytes?: number;
}

export interface WebhookRequest {
  url: string;
  body: Buffer;
  headers: Record<string, string>;
  sharedSecret: string | null;
}

const BLOCKED = 'ESWITCHYARD_BLOCKED';
const TLS_CODES = new Set([
  'DEPTH_ZERO_SELF_SIGNED_CERT', 'SELF_SIGNED_CERT_IN_CHAIN', 'UNABLE_TO_VERIFY_LEAF_SIGNATURE', 'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY', 'CERT_HAS_EXPIRED', 'CERT_NOT_YET_VALID', 'ERR_TLS_CERT_ALTNAME_INVALID', 'CERT_REVOKED',
  'CERT_SIGNATURE_FAILURE', 'ERR_SSL_WRONG_VERSION_NUMBER', 'EPROTO',
]);

/**
 * POSTs webhook bodies with undici: one keep-alive pool per origin, redirects never followed,
 * certificates always verified (a self-signed one fails the handshake, so no request is sent),
 * the whole response bounded by the timeout. The SSRF guard sits in the connection's DNS lookup:
 * every address a name resolves to is checked, and the socket connects to the address that was
 * checked — there is no second lookup to rebind. Literal IP hosts are checked before connecting.
 */
export class WebhookClient {
  private readonly agent: Agent;

  constructor(private readonly opts: WebhookClientOptions) {
    this.agent = new Agent({
      keepAliveTimeout: 30_000,
      connect: { timeout: opts.timeoutMs, rejectUnauthorized: true, lookup: guardedLookup(opts.policy) as never },
      headersTimeout: opts.timeoutMs,
      bodyTimeout: opts.timeoutMs,
    });
  }

  async post({ url, body, headers, sharedSecret }: WebhookRequest): Promise<AttemptResult> {
    let parsed: URL;
    try { parsed = new URL(url); } catch { return { kind: 'error', error: 'invalid_url', message: `${url} is not a URL` }; }
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return { kind: 'error', error: 'invalid_url', message: `scheme ${parsed.protocol} is not http or https` };
    const verdict = this.opts.policy.checkHost(parsed.hostname);
    if ('allowed' in verdict && !verdict.allowed) return { kind: 'error', error: 'blocked_address', message: `${parsed.hostname} is a ${verdict.class} address` };

    const signal = AbortSignal.timeout(this.opts.timeoutMs);
    try {
      const res = await request(parsed, {
        method: 'POST',
        dispatcher: this.agent,
        signal,
        body,
        headers: {
          ...headers,
          'content-type': 'application/json',
          'user-agent': this.opts.userAgent,
          ...(sharedSecret ? { 'x-signature': signature(body, sharedSecret) } : {}),
        },
      });
      const excerpt = await readExcerpt(res.body, this.opts.excerptBytes ?? 1024);
      const retryAfter = res.headers['retry-after'];
      return { kind: 'response', status: res.statusCode, bodyExcerpt: excerpt, retryAfterMs: parseRetryAfter(Array.isArray(retryAfter) ? retryAfter[0] : retryAfter, Date.now()) };
    } catch (err) {
      return classifyError(err, signal.aborted);
    }
  }

  close(): Promise<void> {
    return this.agent.close();
  }
}

async function readExcerpt(body: AsyncIterable<Buffer> & { destroy(): void }, limit: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    if (size < limit) chunks.push(chunk);
    size += chunk.length;
    // Big bodies are cut off: only the excerpt is needed, and reading on would hold the slot.
    if (size > 64 * 1024) { body.destroy(); break; }
  }
  return Buffer.concat(chunks).subarray(0, limit).toString('utf8');
}

function classifyError(err: unknown, timedOut: boolean): AttemptResult {
  const e = err as { code?: string; name?: string; message?: string; cause?: { code?: string; message?: string } };
  const code = e.code ?? e.cause?.code ?? '';
  const message = e.cause?.message ?? e.message ?? String(err);
  if (code === BLOCKED || e.cause?.code === BLOCKED) return { kind: 'error', error: 'blocked_address', message };
  if (TLS_CODES.has(code) || /certificate|self[- ]signed|TLS|SSL/i.test(message) && !timedOut) return { kind: 'error', error: 'tls', message };
  if (timedOut || e.name === 'TimeoutError' || code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT' || code === 'UND_ERR_CONNECT_TIMEOUT') {
    return { kind: 'error', error: 'timeout', message: 'no response within the time limit' };
  }
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'EAI_NONAME') return { kind: 'error', error: 'dns', message };
  if (code === 'ECONNREFUSED' || code === 'EHOSTUNREACH' || code === 'ENETUNREACH') return { kind: 'error', error: 'connect', message };
  if (code === 'ECONNRESET' || code === 'UND_ERR_SOCKET' || code === 'EPIPE') return { kind: 'error', error: 'reset', message };
  return { kind: 'error', error: 'other', message };
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address?: string | LookupAddress[], family?: number) => void;

/** A dns.lookup that refuses names resolving to internal addresses (unless allow-listed). */
export function guardedLookup(policy: AddressPolicy, resolve: typeof dnsLookup = dnsLookup) {
  return (hostname: string, options: { all?: boolean; family?: number; hints?: number }, callback: LookupCallback) => {
    resolve(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err);
      const list = addresses as LookupAddress[];
      for (const { address } of list) {
        const verdict = policy.checkAddress(address);
        if (!verdict.allowed) {
          return callback(Object.assign(new Error(`${hostname} resolves to ${address}, a ${verdict.class} address`), { code: BLOCKED }));
        }
      }
      if (list.length === 0) return callback(Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' }));
      if (options.all) return callback(null, list);
      return callback(null, list[0]!.address, list[0]!.family);
    });
  };
}
