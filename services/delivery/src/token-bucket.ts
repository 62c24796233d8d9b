/**
 * A token bucket that hands out reservations (docs/decisions/0018-destination-rate-limits.md):
 * `reserve` takes the next token even when it is still to come and says when it comes, so callers
 * wait without polling and in the order they asked. The level may go below zero by the tokens
 * reserved ahead; nothing is reserved further ahead than the caller's `maxWaitMs`. Requests sent
 * at their reserved times keep any window of W seconds at or below rate × W + capacity. Pure: the
 * clock is passed in.
 */
export class TokenBucket {
  private level: number;
  private at: number;

  constructor(private rate: number, private capacity: number, now: number) {
    checkRate(rate, capacity);
    // Full: a destination that sends rarely gets its requests at once (capacity is small).
    this.level = capacity;
    this.at = now;
  }

  /** Tokens a second. */
  get perSecond(): number {
    return this.rate;
  }

  /**
   * Changes the rate from `now` on. Tokens reserved ahead stay reserved (the debt is paid back at
   * the new rate), so lowering the rate cannot let through what the old one had promised twice.
   */
  setRate(rate: number, capacity: number, now: number): void {
    checkRate(rate, capacity);
    this.refill(now);
    this.rate = rate;
    this.capacity = capacity;
    this.level = Math.min(this.level, capacity);
  }

  /**
   * Reserves one token: the time (ms, same clock) from which its request may go — `now` when one is
   * there. Undefined, taking nothing, when the token would come more than `maxWaitMs` from now.
   */
  reserve(now: number, maxWaitMs: number): number | undefined {
    this.refill(now);
    if (this.level >= 1) {
      this.level -= 1;
      return now;
    }
    if (this.rate === 0) return undefined;
    const waitMs = Math.ceil(((1 - this.level) / this.rate) * 1000);
    if (waitMs > maxWaitMs) return undefined;
    this.level -= 1;
    return now + waitMs;
  }

  /** How long until the next token (0 when one is there), undefined when none ever comes; takes nothing. */
  tokenInMs(now: number): number | undefined {
    this.refill(now);
    if (this.level >= 1) return 0;
    return this.rate === 0 ? undefined : Math.ceil(((1 - this.level) / this.rate) * 1000);
  }

  /** Whether reserve(now, maxWaitMs) would give a token, without taking one. */
  wouldGrant(now: number, maxWaitMs: number): boolean {
    this.refill(now);
    if (this.level >= 1) return true;
    return this.rate > 0 && Math.ceil(((1 - this.level) / this.rate) * 1000) <= maxWaitMs;
  }

  /** How far ahead tokens are reserved (ms), 0 when none is. */
  reservedAheadMs(now: number): number {
    this.refill(now);
    return this.level >= 0 || this.rate === 0 ? 0 : Math.ceil((-this.level / this.rate) * 1000);
  }

  private refill(now: number): void {
    // A clock that went back adds nothing, and does not move `at` back either.
    if (now <= this.at) return;
    this.level = Math.min(this.capacity, this.level + ((now - this.at) / 1000) * this.rate);
    this.at = now;
  }
}

function checkRate(rate: number, capacity: number): void {
  if (!Number.isFinite(rate) || rate < 0) throw new RangeError(`rate must be a non-negative number, got ${rate}`);
  if (!Number.isFinite(capacity) || capacity < 1) throw new RangeError(`capacity must be at least 1, got ${capacity}`);
}
