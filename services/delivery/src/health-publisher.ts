import type { Logger } from '@switchyard/platform/logger';
import type { DestinationHealth } from '@switchyard/platform/schemas/generated';
import { addAttempt, nextHealth, type Health, type PendingAttempts } from './failing-clock.js';

/** Least time between two records of one destination from one writer: a destination flapping between answers and failures costs at most one record a second. */
export const HEALTH_MIN_WRITE_INTERVAL_MS = 1000;

export interface HealthPublisherDeps {
  /** Writes one record to the destination-state topic (key: health:<destination id>). */
  write: (health: DestinationHealth) => Promise<void>;
  writer: string;
  clock: () => number;
  logger: Logger;
  minIntervalMs?: number;
  /** Runs `fn` after `ms` without keeping the process alive; tests pass one they fire with their clock. */
  setTimer?: (fn: () => void, ms: number) => void;
}

const unrefTimer = (fn: () => void, ms: number): void => { setTimeout(fn, ms).unref(); };

/**
 * Reports each destination's failing clock (failing-clock.ts) on the destination-state topic, where
 * control reads it to disable a destination failing for SWITCHYARD_DISABLE_AFTER and to notify
 * (docs/decisions/0019-auto-disable-and-notifications.md). The clock is shared by every delivery
 * instance: each applies the records it reads (`apply`), so one instance's success stops the clock
 * another started. Attempts are folded while a write is under way or too recent and written
 * together after it; nothing here can fail or delay a delivery.
 */
export class HealthPublisher {
  private readonly known = new Map<string, Health>();
  private readonly pending = new Map<string, PendingAttempts>();
  private readonly lastWrite = new Map<string, number>();
  private readonly busy = new Set<string>();

  constructor(private readonly deps: HealthPublisherDeps) {}

  /** A record read from the topic (any writer's, this one's included). */
  apply(health: DestinationHealth): void {
    this.known.set(health.destinationId, { failingSince: health.failingSince, lastFailureAt: health.lastFailureAt });
  }

  /** An attempt of the destination that made requests: `ok` when one was accepted. */
  attempted(destinationId: string, ok: boolean): void {
    const now = this.deps.clock();
    const pending = this.pending.get(destinationId);
    // The common case, a healthy destination answering, costs two map lookups.
    if (ok && pending === undefined && (this.known.get(destinationId)?.failingSince ?? null) === null) return;
    this.pending.set(destinationId, addAttempt(pending, ok, now));
    this.flush(destinationId);
  }

  private flush(destinationId: string): void {
    if (this.busy.has(destinationId)) return;
    const pending = this.pending.get(destinationId);
    if (!pending) return;
    const now = this.deps.clock();
    const wait = (this.lastWrite.get(destinationId) ?? -Infinity) + (this.deps.minIntervalMs ?? HEALTH_MIN_WRITE_INTERVAL_MS) - now;
    if (wait > 0) {
      this.busy.add(destinationId);
      (this.deps.setTimer ?? unrefTimer)(() => { this.busy.delete(destinationId); this.flush(destinationId); }, wait);
      return;
    }
    this.pending.delete(destinationId);
    const known = this.known.get(destinationId);
    const next = nextHealth(known, pending);
    if (!next) return;
    if ((known?.failingSince ?? null) === null || next.failingSince === null) {
      this.deps.logger.info({ destinationId, failingSince: next.failingSince }, next.failingSince === null ? 'destination answers again: its failing clock stopped' : 'destination fails: its failing clock started');
    }
    // Applied at once: the next attempts are judged against it before it is read back.
    this.known.set(destinationId, next);
    this.lastWrite.set(destinationId, now);
    this.busy.add(destinationId);
    this.deps.write({ destinationId, ...next, at: now, writer: this.deps.writer })
      .catch((err: unknown) => this.deps.logger.warn({ err, destinationId }, 'destination health not written'))
      .finally(() => { this.busy.delete(destinationId); this.flush(destinationId); });
  }
}
