import type { Logger } from '@switchyard/platform/logger';

/** One failed request (or a deferral without one, urlIndex -1) of one task, as the log shows it. */
export interface FailedAttempt {
  destinationId: string;
  taskId: string;
  messageId: string;
  urlIndex: number;
  /** The task's attempt number, this one included. */
  attempt: number;
  /** What became of the task (the trace's outcome): retry_scheduled, deferred, dead_lettered, or delivered when another URL accepted it. */
  outcome: string;
  status: number | null;
  error: string | null;
  /** When the task is tried next (epoch ms); null when it is not (dead-lettered). */
  nextAttemptAt: number | null;
  deadLetterReason: string | null;
}

export interface FailedAttemptLogOptions {
  logger: Logger;
  clock: () => number;
  /** Lines per destination per window before they are only counted. */
  perWindow?: number;
  windowMs?: number;
}

interface Window { start: number; logged: number; suppressed: Map<string, number> }

/**
 * Logs every failed attempt (the webhooks document: a timeout error is logged), at most `perWindow`
 * lines per destination per minute; past that they are counted and one summary line per destination
 * says how many were left out and why, so a dead endpoint taking thousands of tasks a second
 * cannot flood the logs. URLs are named by index only: a URL may carry a token.
 */
export class FailedAttemptLog {
  private readonly windows = new Map<string, Window>();
  private readonly perWindow: number;
  private readonly windowMs: number;

  constructor(private readonly opts: FailedAttemptLogOptions) {
    this.perWindow = opts.perWindow ?? 5;
    this.windowMs = opts.windowMs ?? 60_000;
  }

  record(a: FailedAttempt): void {
    const now = this.opts.clock();
    let window = this.windows.get(a.destinationId);
    if (window && now - window.start >= this.windowMs) {
      this.summarise(a.destinationId, window, now);
      window = undefined;
    }
    if (!window) {
      window = { start: now, logged: 0, suppressed: new Map() };
      this.windows.set(a.destinationId, window);
    }
    if (window.logged < this.perWindow) {
      window.logged++;
      this.opts.logger.warn({
        destinationId: a.destinationId, taskId: a.taskId, messageId: a.messageId, urlIndex: a.urlIndex, attempt: a.attempt,
        outcome: a.outcome, status: a.status, error: a.error, deadLetterReason: a.deadLetterReason,
        nextAttemptAt: a.nextAttemptAt === null ? null : new Date(a.nextAttemptAt).toISOString(),
      }, 'delivery attempt failed');
      return;
    }
    const why = `${a.outcome}:${a.status === null ? (a.error ?? 'unknown') : `status_${a.status}`}`;
    window.suppressed.set(why, (window.suppressed.get(why) ?? 0) + 1);
  }

  /** Ends every window that is over: its summary line, if anything was left out. Call it periodically. */
  sweep(): void {
    const now = this.opts.clock();
    for (const [destinationId, window] of this.windows) {
      if (now - window.start >= this.windowMs) this.summarise(destinationId, window, now);
    }
  }

  /** Ends every window now (at shutdown): no count is lost with the process. */
  flush(): void {
    const now = this.opts.clock();
    for (const [destinationId, window] of this.windows) this.summarise(destinationId, window, now);
  }

  private summarise(destinationId: string, window: Window, now: number): void {
    this.windows.delete(destinationId);
    if (window.suppressed.size === 0) return;
    let count = 0;
    for (const n of window.suppressed.values()) count += n;
    this.opts.logger.warn({
      destinationId, suppressed: count, byReason: Object.fromEntries(window.suppressed),
      since: new Date(window.start).toISOString(), until: new Date(now).toISOString(),
    }, `${count} more failed delivery attempts not logged one by one`);
  }
}
