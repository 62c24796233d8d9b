// A clock tests move by hand: timers fire only inside advance(), in due order.
import type { Clock, Timer } from '../clock.js';

interface Scheduled {
  at: number;
  delay: number;
  fn: () => void;
  seq: number;
}

export class FakeClock implements Clock {
  #now: number;
  #seq = 0;
  readonly #timers = new Set<Scheduled>();
  readonly #onSchedule = new Set<(delay: number) => void>();

  constructor(start = Date.parse('2025-01-01T00:00:00.000Z')) {
    this.#now = start;
  }

  now(): number {
    return this.#now;
  }

  setTimeout(fn: () => void, ms: number): Timer {
    const timer: Scheduled = { at: this.#now + ms, delay: ms, fn, seq: this.#seq++ };
    this.#timers.add(timer);
    for (const wake of this.#onSchedule) wake(ms);
    return { cancel: () => void this.#timers.delete(timer) };
  }

  /** Delays of the timers not yet fired, in the order they were set. */
  get pendingDelays(): number[] {
    return [...this.#timers].sort((a, b) => a.seq - b.seq).map((t) => t.delay);
  }

  /** Resolves with the delay of the next timer set whose delay matches (any, by default). */
  nextTimer(matches: (delay: number) => boolean = () => true): Promise<number> {
    return new Promise((resolve) => {
      const wake = (delay: number) => {
        if (!matches(delay)) return;
        this.#onSchedule.delete(wake);
        resolve(delay);
      };
      this.#onSchedule.add(wake);
    });
  }

  advance(ms: number): void {
    const until = this.#now + ms;
    for (;;) {
      const due = [...this.#timers].filter((t) => t.at <= until).sort((a, b) => a.at - b.at || a.seq - b.seq)[0];
      if (!due) break;
      this.#timers.delete(due);
      this.#now = due.at;
      due.fn();
    }
    this.#now = until;
  }
}
