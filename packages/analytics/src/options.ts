import { systemClock, type Clock } from './clock.js';
import type { Logger } from './debug-log.js';
import { AnalyticsError } from './errors.js';

export interface AnalyticsOptions {
  /** Base URL of the ingest service; batches go to `{endpoint}/v1/batch`. */
  endpoint?: string;
  /** Flush when this many messages are queued; 1 sends every call on its own. */
  flushAt?: number;
  /** Alias of flushAt (the Go library's `Size`). */
  size?: number;
  /** Flush when this many milliseconds have passed since the last flush. */
  flushAfter?: number;
  /** Time limit of one HTTP request, in milliseconds. */
  timeoutMs?: number;
  /** Retries of a batch after its first attempt (5xx, 429, network errors, timeouts). */
  maxRetries?: number;
  /** Messages the client holds, waiting or in flight; calls beyond it throw QUEUE_FULL. */
  maxQueueSize?: number;
  /** Batch requests in flight at once (retry pauses included); further batches wait their turn. */
  maxConcurrentRequests?: number;
  /** The fetch to send with (tests, proxies). */
  fetch?: typeof fetch;
  /** Where debug lines go when DEBUG enables `analytics`. */
  logger?: Logger;
  /** Read once for DEBUG; defaults to process.env. */
  env?: Readonly<Record<string, string | undefined>>;
  /** Time source and timers (tests pass a fake clock). */
  clock?: Clock;
}

export const DEFAULTS = Object.freeze({
  endpoint: 'http://127.0.0.1:8080',
  flushAt: 20,
  flushAfter: 5_000,
  timeoutMs: 10_000,
  maxRetries: 10,
  maxQueueSize: 10_000,
  maxConcurrentRequests: 16,
});

export interface ResolvedOptions {
  readonly writeKey: string;
  readonly batchUrl: string;
  readonly flushAt: number;
  readonly flushAfter: number;
  readonly timeoutMs: number;
  readonly maxRetries: number;
  readonly maxQueueSize: number;
  readonly maxConcurrentRequests: number;
  readonly fetch: typeof fetch;
  readonly logger: Logger;
  readonly debug: string | undefined;
  readonly clock: Clock;
}

function bad(name: string, what: string, value: unknown): AnalyticsError {
  return new AnalyticsError('INVALID_OPTION', `options.${name} must be ${what} (got ${String(value)})`, { field: name });
}

function count(name: string, value: unknown, fallback: number, min: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min) throw bad(name, `an integer ≥ ${min}`, value);
  return value;
}

function millis(name: string, value: unknown, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) throw bad(name, 'a positive number of milliseconds', value);
  return value;
}

function batchUrl(endpoint: unknown): string {
  if (typeof endpoint !== 'string') throw bad('endpoint', 'an http(s) URL', endpoint);
  let url: URL;
  try {
    // A trailing slash keeps a path prefix of the endpoint (e.g. behind a proxy at /ingest).
    url = new URL('v1/batch', endpoint.endsWith('/') ? endpoint : `${endpoint}/`);
  } catch {
    throw bad('endpoint', 'an http(s) URL', endpoint);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw bad('endpoint', 'an http(s) URL', endpoint);
  return url.href;
}

function fn<T>(name: string, value: T | undefined, fallback: T): T {
  if (value === undefined) return fallback;
  if (typeof value !== 'function') throw bad(name, 'a function', value);
  return value;
}

/** Checks every option once, before the client holds any state, and freezes the result. */
export function resolveOptions(writeKey: unknown, options: AnalyticsOptions = {}): ResolvedOptions {
  if (typeof writeKey !== 'string' || writeKey === '') {
    throw new AnalyticsError('MISSING_WRITE_KEY', 'a write key (the non-empty string of the source) is required');
  }
  if (typeof options !== 'object' || options === null) throw bad('options', 'an object', options);
  const { flushAt, size } = options;
  if (flushAt !== undefined && size !== undefined && flushAt !== size) throw bad('size', `equal to flushAt (${flushAt}) when both are given`, size);
  const clock = options.clock ?? systemClock;
  if (typeof clock.now !== 'function' || typeof clock.setTimeout !== 'function') throw bad('clock', 'a Clock ({ now, setTimeout })', clock);
  return Object.freeze({
    writeKey,
    batchUrl: batchUrl(options.endpoint ?? DEFAULTS.endpoint),
    flushAt: count('flushAt', flushAt ?? size, DEFAULTS.flushAt, 1),
    flushAfter: millis('flushAfter', options.flushAfter, DEFAULTS.flushAfter),
    timeoutMs: millis('timeoutMs', options.timeoutMs, DEFAULTS.timeoutMs),
    maxRetries: count('maxRetries', options.maxRetries, DEFAULTS.maxRetries, 0),
    maxQueueSize: count('maxQueueSize', options.maxQueueSize, DEFAULTS.maxQueueSize, 1),
    maxConcurrentRequests: count('maxConcurrentRequests', options.maxConcurrentRequests, DEFAULTS.maxConcurrentRequests, 1),
    // Late-bound so a fetch patched after construction (e.g. by instrumentation) is used.
    fetch: fn('fetch', options.fetch, (input, init) => fetch(input, init)),
    logger: fn<Logger>('logger', options.logger, (line) => console.error(line)),
    debug: (options.env ?? process.env).DEBUG,
    clock,
  });
}
