/**
 * Whether and when to try a batch again. Pure: the attempt's outcome, the time and a random
 * source come in. Exponential backoff with full jitter (a random pause up to base · 2^n, capped),
 * so many clients retrying after one outage do not come back in step. A server's Retry-After
 * on 429/503 replaces the computed pause.
 */
export interface RetryPolicy {
  /** Retries after the first attempt; 0 = one attempt only. */
  maxRetries: number;
  baseMs: number;
  capMs: number;
  /** An upper bound on a server's Retry-After, so one answer cannot stall flush() for hours. */
  maxRetryAfterMs: number;
}

export const RETRY_DEFAULTS: Omit<RetryPolicy, 'maxRetries'> = Object.freeze({ baseMs: 100, capMs: 10_000, maxRetryAfterMs: 60_000 });

export type AttemptOutcome =
  | { kind: 'response'; status: number; retryAfter?: string | null }
  | { kind: 'network' }
  | { kind: 'timeout' };

/** 5xx, 429, network errors and timeouts can succeed later; any other 4xx will not. */
export function isRetriable(outcome: AttemptOutcome): boolean {
  if (outcome.kind !== 'response') return true;
  return outcome.status >= 500 || outcome.status === 429;
}

/**
 * The pause before the next attempt, or undefined to give up.
 * `retriesDone`: how many retries were already made (0 after the first attempt).
 */
export function retryDelay(outcome: AttemptOutcome, retriesDone: number, policy: RetryPolicy, now: number, random: () => number = Math.random): number | undefined {
  if (!isRetriable(outcome) || retriesDone >= policy.maxRetries) return undefined;
  if (outcome.kind === 'response' && (outcome.status === 429 || outcome.status === 503)) {
    const asked = parseRetryAfter(outcome.retryAfter, now);
    if (asked !== undefined) return Math.min(asked, policy.maxRetryAfterMs);
  }
  const ceiling = Math.min(policy.capMs, policy.baseMs * 2 ** retriesDone);
  return Math.floor(random() * ceiling);
}

/** Retry-After as delay-seconds or an HTTP date; undefined when absent or unreadable. */
export function parseRetryAfter(value: string | null | undefined, now: number): number | undefined {
  if (value === undefined || value === null) return undefined;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  // Any other number (negative, fractional) is malformed; Date.parse would read it as a year.
  if (/^[-+]?[\d.]+$/.test(trimmed)) return undefined;
  const at = Date.parse(trimmed);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}
