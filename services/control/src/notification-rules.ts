import type { Destination } from '@switchyard/platform/config-view/config-state';
import type { DestinationHealth } from '@switchyard/platform/schemas/generated';

/** At most one destination.failing per destination in this time (counted on the failing clock's start times). */
export const FAILING_NOTICE_INTERVAL_MS = 3_600_000;
/** message.dead_lettered: one per destination per window of this length, with the window's counts. */
export const DEAD_LETTER_WINDOW_MS = 60_000;
/** How long after a window ends its notice waits for dead letters still on their way (delivery's batching). */
export const DEAD_LETTER_GRACE_MS = 5_000;

/**
 * Whether control disables the destination now: a webhooks destination, enabled, whose failing
 * clock reports a failure at least `disableAfterMs` after the clock's start. The start is the later
 * of the first failure after the last success and the destination's last change (updatedAt), so
 * enabling it again, or any edit, gives it a full period (docs/decisions/0019-auto-disable-and-notifications.md).
 * Judged on the reported failure times, not on the reader's clock: a destination with no attempts
 * in the period is not disabled for it.
 */
export function shouldDisable(health: Pick<DestinationHealth, 'failingSince' | 'lastFailureAt'>, destination: Pick<Destination, 'type' | 'enabled' | 'updatedAt'> | undefined, disableAfterMs: number): boolean {
  if (!destination || destination.type !== 'webhooks' || !destination.enabled) return false;
  if (health.failingSince === null || health.lastFailureAt === null) return false;
  return health.lastFailureAt - Math.max(health.failingSince, destination.updatedAt) >= disableAfterMs;
}

/**
 * destination.failing: once per failing period (a new failingSince), at most once an hour per
 * destination. Decided on the records' own times, so an instance that reads the topic again after
 * a restart rebuilds the same throttle from the records it reads (compaction keeps the latest
 * record per destination, so the last period's start) and does not notify twice within the hour.
 */
export class FailingNotices {
  private readonly periods = new Map<string, number>();
  private readonly notified = new Map<string, number>();

  constructor(private readonly intervalMs: number = FAILING_NOTICE_INTERVAL_MS) {}

  /** True when this record starts a failing period that is notified. */
  observe(health: Pick<DestinationHealth, 'destinationId' | 'failingSince'>): boolean {
    const { destinationId: id, failingSince } = health;
    if (failingSince === null || this.periods.get(id) === failingSince) return false;
    this.periods.set(id, failingSince);
    const last = this.notified.get(id);
    if (last !== undefined && failingSince - last < this.intervalMs) return false;
    this.notified.set(id, failingSince);
    return true;
  }

  forget(destinationId: string): void {
    this.periods.delete(destinationId);
    this.notified.delete(destinationId);
  }
}

export interface DeadLetterWindow {
  destinationId: string;
  sourceId: string;
  from: number;
  to: number;
  count: number;
  reasons: Record<string, number>;
}

/**
 * message.dead_lettered: dead letters counted per destination in fixed windows of the dead
 * letters' own failedAt (DEAD_LETTER_WINDOW_MS), each notified once when it has ended. Fixed
 * windows of record times make every control instance count the same letters into the same
 * notices (same counts, same webhook-id). Windows that ended before `since` (this instance's
 * start: its predecessor sent them) are dropped as they are read.
 */
export class DeadLetterWindows {
  private readonly open = new Map<string, DeadLetterWindow>();

  constructor(private readonly since: number, private readonly windowMs: number = DEAD_LETTER_WINDOW_MS, private readonly graceMs: number = DEAD_LETTER_GRACE_MS) {}

  add(letter: { destinationId: string; sourceId: string; reason: string; failedAt: number }): void {
    const from = letter.failedAt - (letter.failedAt % this.windowMs);
    const to = from + this.windowMs;
    if (to + this.graceMs <= this.since) return;
    const key = `${letter.destinationId}\n${from}`;
    let w = this.open.get(key);
    if (!w) this.open.set(key, (w = { destinationId: letter.destinationId, sourceId: letter.sourceId, from, to, count: 0, reasons: {} }));
    w.count++;
    w.reasons[letter.reason] = (w.reasons[letter.reason] ?? 0) + 1;
  }

  /** The windows that ended (and their grace period) by `now`, removed. */
  due(now: number): DeadLetterWindow[] {
    const out: DeadLetterWindow[] = [];
    for (const [key, w] of this.open) {
      if (w.to + this.graceMs > now) continue;
      this.open.delete(key);
      out.push(w);
    }
    return out;
  }
}
