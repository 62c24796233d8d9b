import { isIPv6 } from 'node:net';

export interface AuthFailureLimiterOptions {
  /** Failed authentications an address may make per window; the next ones are answered 429. */
  limit: number;
  /** The window, from an address's first failure in it. */
  windowMs: number;
  /** Addresses tracked at most (memory bound); past it, the oldest window is forgotten. */
  maxAddresses?: number;
}

export type FailureVerdict = { limited: false } | { limited: true; retryAfterSeconds: number };

interface Window { start: number; failures: number }

/**
 * Counts failed admin API authentications per client address in fixed windows that start at the
 * address's first failure: the first `limit` failures of a window are answered 401, the rest 429
 * with Retry-After (the seconds until the window ends). Only failures are counted and only
 * failures are refused: a request with a valid token is never limited, whatever its address did.
 * Pure apart from its map; the clock is passed in. IPv6 addresses count per /64 (one host holds a
 * whole /64), IPv4-mapped IPv6 as their IPv4 address.
 */
export class AuthFailureLimiter {
  private readonly windows = new Map<string, Window>();
  private readonly maxAddresses: number;

  constructor(private readonly opts: AuthFailureLimiterOptions) {
    if (!(Number.isInteger(opts.limit) && opts.limit >= 1)) throw new RangeError('limit must be an integer ≥ 1');
    if (!(opts.windowMs > 0)) throw new RangeError('windowMs must be > 0');
    this.maxAddresses = opts.maxAddresses ?? 10_000;
  }

  /** Records one failed authentication from `address` at `now`: whether to answer 429 instead of 401. */
  fail(address: string, now: number): FailureVerdict {
    const key = clientKey(address);
    let w = this.windows.get(key);
    if (w && now - w.start >= this.opts.windowMs) {
      this.windows.delete(key);
      w = undefined;
    }
    if (!w) {
      this.makeRoom(now);
      w = { start: now, failures: 0 };
      // Inserted in order of window start: the map's front is always the oldest window.
      this.windows.set(key, w);
    }
    w.failures++;
    if (w.failures <= this.opts.limit) return { limited: false };
    return { limited: true, retryAfterSeconds: Math.max(1, Math.ceil((w.start + this.opts.windowMs - now) / 1000)) };
  }

  get size(): number { return this.windows.size; }

  private makeRoom(now: number): void {
    for (const [key, w] of this.windows) {
      if (this.windows.size < this.maxAddresses && now - w.start < this.opts.windowMs) break;
      this.windows.delete(key);
    }
  }
}

/** The address a failure counts against: IPv4 as is, IPv4-mapped IPv6 as IPv4, other IPv6 by its /64. */
export function clientKey(address: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return mapped[1]!;
  if (!isIPv6(address)) return address;
  const [head = '', tail = ''] = address.toLowerCase().split('%')[0]!.split('::');
  const left = head === '' ? [] : head.split(':');
  const right = address.includes('::') ? (tail === '' ? [] : tail.split(':')) : [];
  const groups = address.includes('::') ? [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right] : left;
  return `${groups.slice(0, 4).map((g) => g.replace(/^0+(?=.)/, '')).join(':')}::/64`;
}
