import type { AttemptResult } from './outcome.js';

/**
 * Per-endpoint circuit breaker (docs/decisions/0007-delivery-concurrency-and-offsets.md: one
 * failing endpoint must not slow the others). After `failureThreshold` consecutive failures an
 * endpoint's circuit opens and its tasks go straight to the retry tier instead of holding in-flight
 * slots for 5 s each; after `openMs` one probe is let through (half-open), and its result closes or
 * reopens the circuit. Keyed by URL origin; the clock is passed in.
 */
export type CircuitState = 'closed' | 'open' | 'half_open';

export interface CircuitBreakerOptions {
  /** Consecutive failures (timeouts, connect errors) that open the circuit. */
  failureThreshold: number;
  /** How long an open circuit refuses before it lets one probe through. */
  openMs: number;
  now: () => number;
}

type Circuit = { failures: number; openedAt: number | undefined; probeAt: number | undefined };

/**
 * Which attempts count as failures for the breaker: only those that hold a slot for long and say
 * the endpoint is unreachable. Any response — a 500 included — shows it is alive and answering, and
 * errors found before sending (tls, blocked address, dns, invalid url) cost no slot time.
 */
export function isBreakerFailure(r: AttemptResult): boolean {
  return r.kind === 'error' && (r.error === 'timeout' || r.error === 'connect');
}

/** The breaker key of a URL: its origin (scheme, host, port); unparsable URLs key as themselves. */
export function breakerKey(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return url;
  }
}

export class CircuitBreaker {
  private readonly circuits = new Map<string, Circuit>();
  private readonly failureThreshold: number;
  private readonly openMs: number;
  private readonly now: () => number;

  constructor(opts: CircuitBreakerOptions) {
    if (!Number.isInteger(opts.failureThreshold) || opts.failureThreshold < 1) throw new RangeError(`failureThreshold must be a positive integer, got ${opts.failureThreshold}`);
    if (!Number.isFinite(opts.openMs) || opts.openMs < 0) throw new RangeError(`openMs must be a non-negative number, got ${opts.openMs}`);
    this.failureThreshold = opts.failureThreshold;
    this.openMs = opts.openMs;
    this.now = opts.now;
  }

  state(key: string): CircuitState {
    const c = this.circuits.get(key);
    if (c?.openedAt === undefined) return 'closed';
    return this.now() - c.openedAt >= this.openMs ? 'half_open' : 'open';
  }

  /**
   * Whether a request to this endpoint may go now. Half-open lets exactly one probe through; a
   * probe whose result is never recorded (its task lost in a crash or a rebalance) stops blocking
   * after another openMs, so the circuit cannot stay stuck.
   */
  allow(key: string): boolean {
    const state = this.state(key);
    if (state === 'closed') return true;
    if (state === 'open') return false;
    const c = this.circuits.get(key)!;
    const now = this.now();
    if (c.probeAt !== undefined && now - c.probeAt < this.openMs) return false;
    c.probeAt = now;
    return true;
  }

  /**
   * Whether allow() would refuse a request now (without taking the probe): open, or half-open with
   * its probe still out. A task with nothing but refusing endpoints is deferred without a slot.
   */
  refuses(key: string): boolean {
    const state = this.state(key);
    if (state !== 'half_open') return state === 'open';
    const probeAt = this.circuits.get(key)!.probeAt;
    return probeAt !== undefined && this.now() - probeAt < this.openMs;
  }

  /** The result of a request that allow() let through; see isBreakerFailure for what fails. */
  record(key: string, success: boolean): void {
    if (success) {
      // Closed with no failures is the default: keep no state for healthy endpoints.
      this.circuits.delete(key);
      return;
    }
    const c = this.circuits.get(key) ?? { failures: 0, openedAt: undefined, probeAt: undefined };
    c.failures++;
    // A failed probe (or a failure while open, from a request sent before it opened) restarts
    // the open period; otherwise the circuit opens when the threshold is reached.
    if (c.openedAt !== undefined || c.failures >= this.failureThreshold) {
      c.openedAt = this.now();
      c.probeAt = undefined;
    }
    this.circuits.set(key, c);
  }
}
