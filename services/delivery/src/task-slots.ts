import { ConcurrencyLimiter, KeyedLimiter } from './in-flight-limits.js';

export interface TaskSlotsOptions {
  /** Tasks admitted and unfinished, over all destinations: the consumer waits beyond this. */
  maxInFlight: number;
  /** Requests in flight to one destination. */
  maxInFlightPerDestination: number;
  /** Tasks of one destination waiting for its slots; beyond this the partition pauses until they drain. */
  maxWaitingPerDestination: number;
  /** Shutdown began: a slot obtained after waiting is given back. */
  stopping: () => boolean;
}

/**
 * The slots the delivery consumer's tasks hold (global, per destination, deferral) and how many
 * tasks are unfinished, so that stop() and handOver() can wait for the last one.
 */
export class TaskSlots {
  readonly global: ConcurrencyLimiter;
  /**
   * Tasks on their way to the retry tier without a request (their destination refuses or stalled)
   * have slots of their own, as many as the global ones: a hung destination's tier records falling
   * due together (thousands, after a burst) took every global slot while their retry records were
   * written, and the healthy destinations' tasks waited behind them. Past this the partition is
   * sought back and waits until half have finished.
   */
  readonly deferrals: ConcurrencyLimiter;
  readonly perDestination: KeyedLimiter;
  /** Tasks admitted and unfinished (each holds a global slot), and who waits for them to reach 0. */
  private active = 0;
  private readonly idle: Array<() => void> = [];

  constructor(private readonly opts: TaskSlotsOptions) {
    this.global = new ConcurrencyLimiter(opts.maxInFlight);
    this.deferrals = new ConcurrencyLimiter(opts.maxInFlight);
    this.perDestination = new KeyedLimiter(opts.maxInFlightPerDestination);
  }

  /** Tasks admitted and unfinished (a task, a deferral, a range being written or run). */
  get unfinished(): number {
    return this.active;
  }

  /** A task (or deferral, or range write) was admitted: stop() waits for it. */
  taskStarted(): void {
    this.active++;
  }

  /** A task's global slot is free again; stop() waits for the last one. */
  finished(): void {
    this.global.release();
    this.taskEnded();
  }

  taskEnded(): void {
    this.active--;
    if (this.active === 0) { for (const resolve of this.idle.splice(0)) resolve(); }
  }

  whenIdle(): Promise<void> {
    return this.active === 0 ? Promise.resolve() : new Promise((resolve) => { this.idle.push(resolve); });
  }

  /** A global slot, or false (nothing taken) when shutdown began while waiting for it. */
  async acquireUnlessStopping(): Promise<boolean> {
    await this.global.acquire();
    if (!this.opts.stopping()) return true;
    this.global.release();
    return false;
  }

  /** Every request slot of the destination is taken and its queue is full. */
  destinationFull(destinationId: string): boolean {
    return this.perDestination.active(destinationId) >= this.opts.maxInFlightPerDestination
      && this.perDestination.waiting(destinationId) >= this.opts.maxWaitingPerDestination;
  }
}
