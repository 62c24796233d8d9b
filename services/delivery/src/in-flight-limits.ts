/**
 * Caps on requests in flight (docs/decisions/0007-delivery-concurrency-and-offsets.md): globally,
 * and per destination so one slow endpoint cannot take every slot. Waiters are served first come,
 * first served; a released slot passes straight to the next waiter, so a newcomer calling
 * tryAcquire cannot jump the queue.
 */
export class ConcurrencyLimiter {
  private activeCount = 0;
  // FIFO with a moving head: shift() on a large array is O(n).
  private waiters: Array<() => void> = [];
  private head = 0;

  constructor(readonly limit: number) {
    if (!Number.isInteger(limit) || limit < 1) throw new RangeError(`concurrency limit must be a positive integer, got ${limit}`);
  }

  get active(): number {
    return this.activeCount;
  }

  get waiting(): number {
    return this.waiters.length - this.head;
  }

  /** Takes a slot if one is free now and nobody is waiting for one. */
  tryAcquire(): boolean {
    if (this.activeCount >= this.limit || this.waiting > 0) return false;
    this.activeCount++;
    return true;
  }

  /** Resolves once a slot is held; release() it exactly once. */
  acquire(): Promise<void> {
    if (this.tryAcquire()) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  release(): void {
    // Releasing more than was acquired would silently raise the cap.
    if (this.activeCount === 0) throw new Error('release() without a matching acquire()');
    if (this.waiting > 0) {
      const next = this.waiters[this.head]!;
      this.head++;
      if (this.head > 1024 && this.head * 2 > this.waiters.length) {
        this.waiters = this.waiters.slice(this.head);
        this.head = 0;
      }
      next(); // the slot changes hands; the active count stays
      return;
    }
    this.activeCount--;
  }
}

/** One ConcurrencyLimiter per key (a destination), created on first use and dropped when idle. */
export class KeyedLimiter {
  private readonly limiters = new Map<string, ConcurrencyLimiter>();

  constructor(readonly perKeyLimit: number) {
    if (!Number.isInteger(perKeyLimit) || perKeyLimit < 1) throw new RangeError(`per-key limit must be a positive integer, got ${perKeyLimit}`);
  }

  private limiter(key: string): ConcurrencyLimiter {
    let l = this.limiters.get(key);
    if (!l) {
      l = new ConcurrencyLimiter(this.perKeyLimit);
      this.limiters.set(key, l);
    }
    return l;
  }

  /** Never leaves an idle key behind: a new key's first slot is always free. */
  tryAcquire(key: string): boolean {
    return this.limiter(key).tryAcquire();
  }

  acquire(key: string): Promise<void> {
    return this.limiter(key).acquire();
  }

  release(key: string): void {
    const l = this.limiters.get(key);
    if (!l) throw new Error(`release(${JSON.stringify(key)}) without a matching acquire()`);
    l.release();
    if (l.active === 0 && l.waiting === 0) this.limiters.delete(key);
  }

  active(key: string): number {
    return this.limiters.get(key)?.active ?? 0;
  }

  waiting(key: string): number {
    return this.limiters.get(key)?.waiting ?? 0;
  }

  /** Keys with a request in flight or waiting; idle keys are not kept. */
  get size(): number {
    return this.limiters.size;
  }
}
