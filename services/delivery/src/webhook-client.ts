import { hash } from 'node:crypto';
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { Agent, Pool, type Dispatcher } from 'undici';
import type { AddressPolicy } from '@switchyard/platform/net/address-policy';
import type { ClientCertificate } from '@switchyard/platform/schemas/generated';
import { ClientDispatchers } from './client-dispatchers.js';
import { parseRetryAfter, type AttemptResult } from './outcome.js';
import { standardHeaders, type StandardSigning } from './standard-signing.js';
import { alertReportingConnector } from './tls-alerts.js';

/** SHA-1's block size: HMAC pads (or first hashes) the key to this length (RFC 2104). */
const SHA1_BLOCK = 64;
/** The inner and outer padded keys of each shared secret; a deployment has a handful of secrets. */
const hmacPads = new Map<string, { inner: Buffer; outer: Buffer }>();

function padsOf(sharedSecret: string): { inner: Buffer; outer: Buffer } {
  let pads = hmacPads.get(sharedSecret);
  if (pads) return pads;
  let key = Buffer.from(sharedSecret, 'utf8');
  if (key.length > SHA1_BLOCK) key = hash('sha1', key, 'buffer');
  const inner = Buffer.alloc(SHA1_BLOCK, 0x36);
  const outer = Buffer.alloc(SHA1_BLOCK, 0x5c);
  for (let i = 0; i < key.length; i++) { inner[i]! ^= key[i]!; outer[i]! ^= key[i]!; }
  if (hmacPads.size >= 10_000) hmacPads.clear();
  hmacPads.set(sharedSecret, (pads = { inner, outer }));
  return pads;
}

/**
 * X-Signature: lower-case hex HMAC-SHA1 of the exact body bytes, keyed by the shared secret.
 * Computed as RFC 2104 spells it, H(K ⊕ opad ‖ H(K ⊕ ipad ‖ body)), with two one-shot `crypto.hash`
 * calls and the padded keys kept per secret: `createHmac` builds a stream object and a native
 * handle per request, which cost delivery ~10 µs of CPU per request against ~2 µs for this.
 * The unit test checks it against `createHmac`.
 */
export function signature(body: Buffer, sharedSecret: string): string {
  const { inner, outer } = padsOf(sharedSecret);
  const innerHash = hash('sha1', Buffer.concat([inner, body], SHA1_BLOCK + body.length), 'buffer');
  return hash('sha1', Buffer.concat([outer, innerHash], SHA1_BLOCK + innerHash.length), 'hex');
}

export interface WebhookClientOptions {
  policy: AddressPolicy;
  /** The receiver must answer within this time (whole response); 5 s by the document. */
  timeoutMs: number;
  userAgent: string;
  /** Bytes of a response body kept for dead letters and logs. */
  excerptBytes?: number;
  /** PEM CA certificates to trust instead of the system's (tests; deployments use NODE_EXTRA_CA_CERTS). */
  ca?: string;
}

export interface WebhookRequest {
  url: string;
  body: Buffer;
  headers: Record<string, string>;
  sharedSecret: string | null;
  /** Standard Webhooks headers (webhook-id, -timestamp, -signature) when the destination uses them. */
  standard?: StandardSigning;
  /** Mutual TLS: the certificate this URL's handshakes present, and the destination it belongs to. */
  clientCertificate?: { destinationId: string; certificate: ClientCertificate };
}

const BLOCKED = 'ESWITCHYARD_BLOCKED';
// OpenSSL's certificate verification failures (the codes Node gives the socket error) and Node's
// own host-name check. Only these make a TLS failure (no request, no retry,
// docs/decisions/0005-delivery-outcomes.md); anything else that breaks a handshake (closed, reset,
// a plain-HTTP listener) is a connection error and is retried. Classified by code, never by message
// text.
const CERTIFICATE_CODES = new Set([
  'DEPTH_ZERO_SELF_SIGNED_CERT', 'SELF_SIGNED_CERT_IN_CHAIN', 'UNABLE_TO_VERIFY_LEAF_SIGNATURE', 'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY', 'UNABLE_TO_DECRYPT_CERT_SIGNATURE', 'UNABLE_TO_DECODE_ISSUER_PUBLIC_KEY',
  'CERT_SIGNATURE_FAILURE', 'CERT_NOT_YET_VALID', 'CERT_HAS_EXPIRED', 'ERROR_IN_CERT_NOT_BEFORE_FIELD',
  'ERROR_IN_CERT_NOT_AFTER_FIELD', 'CERT_CHAIN_TOO_LONG', 'CERT_REVOKED', 'INVALID_CA', 'PATH_LENGTH_EXCEEDED',
  'INVALID_PURPOSE', 'CERT_UNTRUSTED', 'CERT_REJECTED', 'HOSTNAME_MISMATCH', 'ERR_TLS_CERT_ALTNAME_INVALID',
]);
// The TLS alerts of a receiver that requires a client certificate and got none, or refuses the one
// it got (mutual TLS; reported as errors by tls-alerts.ts). Also TLS failures: only a change of
// configuration (ours or the receiver's) fixes them. A receiver that just closes the connection
// instead (Node's own https server does) stays a retried reset: nothing tells it from a crash.
const CLIENT_CERTIFICATE_ALERTS = new Set([
  'ERR_SSL_TLSV13_ALERT_CERTIFICATE_REQUIRED', 'ERR_SSL_SSLV3_ALERT_HANDSHAKE_FAILURE', 'ERR_SSL_SSLV3_ALERT_BAD_CERTIFICATE',
  'ERR_SSL_SSLV3_ALERT_UNSUPPORTED_CERTIFICATE', 'ERR_SSL_SSLV3_ALERT_CERTIFICATE_REVOKED', 'ERR_SSL_SSLV3_ALERT_CERTIFICATE_EXPIRED',
  'ERR_SSL_SSLV3_ALERT_CERTIFICATE_UNKNOWN', 'ERR_SSL_TLSV1_ALERT_UNKNOWN_CA', 'ERR_SSL_TLSV1_ALERT_ACCESS_DENIED',
]);

/** Parsed URLs and host verdicts are kept per URL string; a destination has a handful of URLs. */
const CACHE_MAX = 10_000;

type Target = { origin: string; path: string } | { error: AttemptResult };

/**
 * POSTs webhook bodies with undici: one keep-alive pool per origin, redirects never followed,
 * certificates always verified (a self-signed one fails the handshake, so no request is sent),
 * the whole response bounded by the timeout. The SSRF guard sits in the connection's DNS lookup:
 * every address a name resolves to is checked, and the socket connects to the address that was
 * checked — there is no second lookup to rebind. Literal IP hosts are checked before connecting.
 *
 * Requests go through undici's low-level `dispatch` with a small handler rather than `request()`:
 * only the status, one header and an excerpt of the body are needed, and skipping the response
 * stream, its async iterator and the AbortSignal per request is the largest saving a CPU profile
 * of delivery shows.
 */
export class WebhookClient {
  private readonly agent: Agent;
  /** Webhooks with a client certificate get agents of their own, built like the shared one. */
  private readonly certified: ClientDispatchers;
  private readonly targets = new Map<string, Target>();
  private readonly headerSets = new WeakMap<Record<string, string>, Record<string, string>>();

  constructor(private readonly opts: WebhookClientOptions) {
    this.agent = webhookAgent(opts);
    this.certified = new ClientDispatchers(({ cert, key }) => webhookAgent(opts, { cert, key }));
  }

  post({ url, body, headers, sharedSecret, standard, clientCertificate }: WebhookRequest): Promise<AttemptResult> {
    const target = this.target(url);
    if ('error' in target) return Promise.resolve(target.error);
    const dispatcher = clientCertificate ? this.certified.for(clientCertificate.destinationId, url, clientCertificate.certificate) : this.agent;
    return new Promise<AttemptResult>((resolve) => {
      const handler = new ResponseHandler(this.opts.excerptBytes ?? 1024, resolve);
      handler.startTimer(this.opts.timeoutMs);
      try {
        dispatcher.dispatch({
          origin: target.origin,
          path: target.path,
          method: 'POST',
          body,
          headers: sharedSecret || standard
            ? {
              ...this.baseHeaders(headers),
              ...(sharedSecret ? { 'x-signature': signature(body, sharedSecret) } : {}),
              ...(standard ? standardHeaders(standard, body, Date.now()) : {}),
            }
            : this.baseHeaders(headers),
        }, handler);
      } catch (err) {
        handler.onError(err as Error);
      }
    });
  }

  async close(): Promise<void> {
    await Promise.all([this.agent.close(), this.certified.close()]);
  }

  /** A webhook's own headers with ours over them, built once per headers object (a destination's config). */
  private baseHeaders(headers: Record<string, string>): Record<string, string> {
    let base = this.headerSets.get(headers);
    if (!base) {
      base = { ...headers, 'content-type': 'application/json', 'user-agent': this.opts.userAgent };
      this.headerSets.set(headers, base);
    }
    return base;
  }

  /** The origin and path of a URL, or why it cannot be posted to (the address policy never changes). */
  private target(url: string): Target {
    let target = this.targets.get(url);
    if (target) return target;
    target = parseTarget(url, this.opts.policy);
    if (this.targets.size >= CACHE_MAX) this.targets.clear();
    this.targets.set(url, target);
    return target;
  }
}

/**
 * An agent with delivery's connection rules: keep-alive, the connect timeout, certificates always
 * verified, the SSRF-guarded lookup, TLS alerts reported (tls-alerts.ts), and, for a webhook with
 * mutual TLS, its client certificate. A connector per origin, as undici makes by default, so each
 * origin keeps its own TLS session cache.
 */
function webhookAgent(opts: WebhookClientOptions, clientCertificate?: { cert: string; key: string }): Agent {
  const connect = { timeout: opts.timeoutMs, rejectUnauthorized: true, lookup: guardedLookup(opts.policy) as never, ...(opts.ca ? { ca: opts.ca } : {}), ...clientCertificate };
  return new Agent({
    keepAliveTimeout: 30_000,
    factory: (origin, options) => new Pool(origin, { ...options, connect: alertReportingConnector(connect) }),
    // The handler's timer bounds the whole response (and looks again after a stall, below);
    // undici's own would fire first after a stall.
    headersTimeout: 0,
    bodyTimeout: 0,
  });
}

function parseTarget(url: string, policy: AddressPolicy): Target {
  let parsed: URL;
  try { parsed = new URL(url); } catch { return { error: { kind: 'error', error: 'invalid_url', message: `${url} is not a URL` } }; }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return { error: { kind: 'error', error: 'invalid_url', message: `scheme ${parsed.protocol} is not http or https` } };
  const verdict = policy.checkHost(parsed.hostname);
  if ('allowed' in verdict && !verdict.allowed) return { error: { kind: 'error', error: 'blocked_address', message: `${parsed.hostname} is a ${verdict.class} address` } };
  return { origin: parsed.origin, path: `${parsed.pathname}${parsed.search}` };
}

/** Responses bigger than this are cut off: only the excerpt is needed, and reading on would hold the slot. */
const READ_LIMIT = 64 * 1024;

/** `retry-after` as bytes, to find it among a response's raw header names without decoding them all. */
const RETRY_AFTER = Buffer.from('retry-after');

/** The first Retry-After value among raw headers ([name, value, name, value, …]), names compared case-insensitively. */
function rawRetryAfter(raw: Buffer[]): string | undefined {
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i]!;
    if (name.length !== RETRY_AFTER.length) continue;
    let same = true;
    for (let j = 0; j < name.length && same; j++) same = (name[j]! | 0x20) === RETRY_AFTER[j];
    if (same) return raw[i + 1]!.toString('latin1');
  }
  return undefined;
}

/**
 * Collects one response: its status, Retry-After and the first bytes of the body, and settles once
 * (end, error, the size limit, or the whole-response timeout, whichever comes first).
 *
 * It implements the handler interface undici's HTTP/1.1 client calls itself (onConnect, onHeaders
 * with raw header buffers, onData, onComplete, onError). undici 7 also offers a newer one
 * (onRequestStart, onResponseStart with a headers object, …), but serves it through an adapter that
 * allocates a wrapper and a controller per request and decodes every response header into an
 * object, of which only Retry-After is needed.
 */
/** A timeout timer this late means the process did not run meanwhile (SIGSTOP, starvation). */
const LATE_TIMER_MS = 1000;

class ResponseHandler implements Dispatcher.DispatchHandler {
  private abort: ((err?: Error) => void) | undefined;
  private timer: NodeJS.Timeout | undefined;
  private timedOut = false;
  private settled = false;
  private status = 0;
  private retryAfter: string | undefined;
  private readonly chunks: Buffer[] = [];
  private size = 0;

  constructor(private readonly excerptBytes: number, private readonly resolve: (r: AttemptResult) => void) {}

  startTimer(ms: number): void {
    const due = Date.now() + ms;
    let lookedAgain = false;
    const expire = (): void => {
      // Over a second late, the process was frozen or starved: a response that arrived meanwhile
      // waits in the socket, and timers run before I/O in a turn of the event loop. Look once more
      // after this turn's I/O before calling it a timeout (else a frozen instance sent the receiver's
      // answered calls to the retry tier, and they were delivered again).
      if (!lookedAgain && Date.now() - due > LATE_TIMER_MS) {
        lookedAgain = true;
        this.timer = setTimeout(expire, 0);
        return;
      }
      this.timedOut = true;
      const err = Object.assign(new Error('no response within the time limit'), { name: 'TimeoutError' });
      if (this.abort) this.abort(err); else this.onError(err);
    };
    this.timer = setTimeout(expire, ms);
  }

  onConnect(abort: (err?: Error) => void): void {
    this.abort = abort;
    if (this.settled) abort(new Error('settled before the request started'));
  }

  onHeaders(statusCode: number, rawHeaders: Buffer[]): boolean {
    if (statusCode < 200) return true; // 1xx informational: the real response follows
    this.status = statusCode;
    this.retryAfter = rawRetryAfter(rawHeaders);
    return true;
  }

  onData(chunk: Buffer): boolean {
    if (this.size < this.excerptBytes) this.chunks.push(chunk);
    this.size += chunk.length;
    if (this.size > READ_LIMIT) {
      this.finish();
      this.abort?.(new Error('response body over the read limit'));
      return false;
    }
    return true;
  }

  onComplete(): void {
    this.finish();
  }

  onError(err: Error): void {
    this.settle(classifyError(err, this.timedOut));
  }

  private finish(): void {
    const excerpt = this.chunks.length === 0 ? ''
      : this.chunks.length === 1 ? this.chunks[0]!.toString('utf8', 0, Math.min(this.excerptBytes, this.chunks[0]!.length))
        : Buffer.concat(this.chunks).subarray(0, this.excerptBytes).toString('utf8');
    this.settle({ kind: 'response', status: this.status, bodyExcerpt: excerpt, retryAfterMs: this.retryAfter === undefined ? undefined : parseRetryAfter(this.retryAfter, Date.now()) });
  }

  private settle(result: AttemptResult): void {
    if (this.settled) return;
    this.settled = true;
    clearTimeout(this.timer);
    handOver(this.resolve, result);
  }
}

/**
 * Results reach callers one event-loop turn after their response completed. undici lets a
 * keep-alive connection carry its next request only a full turn after a response (setImmediate, for
 * servers that close a connection they said they would keep); delivery, handed a result at once,
 * would send its next task before that and undici would open another connection: an origin held
 * twice as many connections as requests in flight, and each request cost about a third more CPU.
 * The results of a turn are gathered, and handed over in the next turn
 * from a setImmediate queued during this turn's immediates, so after undici's.
 */
type Settled = { resolvers: Array<(r: AttemptResult) => void>; results: AttemptResult[] };
let settledThisTurn: Settled = { resolvers: [], results: [] };
let handoverQueued = false;

function handOver(resolve: (r: AttemptResult) => void, result: AttemptResult): void {
  settledThisTurn.resolvers.push(resolve);
  settledThisTurn.results.push(result);
  if (handoverQueued) return;
  handoverQueued = true;
  setImmediate(nextTurn);
}

function nextTurn(): void {
  const batch = settledThisTurn;
  settledThisTurn = { resolvers: [], results: [] };
  handoverQueued = false;
  setImmediate(deliverResults, batch);
}

function deliverResults({ resolvers, results }: Settled): void {
  for (let i = 0; i < resolvers.length; i++) resolvers[i]!(results[i]!);
}

function classifyError(err: unknown, timedOut: boolean): AttemptResult {
  const e = err as { code?: string; name?: string; message?: string; cause?: { code?: string; message?: string } };
  const code = e.code ?? e.cause?.code ?? '';
  const message = e.cause?.message ?? e.message ?? String(err);
  if (code === BLOCKED || e.cause?.code === BLOCKED) return { kind: 'error', error: 'blocked_address', message };
  if (CERTIFICATE_CODES.has(code) || CLIENT_CERTIFICATE_ALERTS.has(code)) return { kind: 'error', error: 'tls', message };
  if (timedOut || e.name === 'TimeoutError' || code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT' || code === 'UND_ERR_CONNECT_TIMEOUT') {
    return { kind: 'error', error: 'timeout', message: 'no response within the time limit' };
  }
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'EAI_NONAME') return { kind: 'error', error: 'dns', message };
  if (code === 'ECONNREFUSED' || code === 'EHOSTUNREACH' || code === 'ENETUNREACH') return { kind: 'error', error: 'connect', message };
  if (code === 'ECONNRESET' || code === 'UND_ERR_SOCKET' || code === 'EPIPE' || code === 'ERR_SSL_WRONG_VERSION_NUMBER' || code === 'EPROTO') return { kind: 'error', error: 'reset', message };
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
