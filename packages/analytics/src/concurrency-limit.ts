/**
 * At most `max` tasks at a time; the others wait their turn in arrival order. Bounds the requests
 * in flight, so a burst of calls (or a server that is down and being retried) cannot open
 * hundreds of connections at once.
 */
export class ConcurrencyLimit {
  readonly #max: number;
  #active = 0;
  readonly #waiting: (() => void)[] = [];

  constructor(max: number) {
    this.#max = max;
  }

  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.#active < this.#max) this.#active++;
    else await new Promise<void>((resolve) => this.#waiting.push(resolve));
    try {
      return await task();
    } finally {
      // Hand the slot straight to the next task, so #active never drops while tasks wait.
      const next = this.#waiting.shift();
      if (next) next();
      else this.#active--;
    }
  }
}
