import type { DestinationHealth } from '@switchyard/platform/schemas/generated';

/** How often, at most, a writer reports again that a failing destination still fails. */
export const HEALTH_REFRESH_MS = 10_000;

export type Health = Pick<DestinationHealth, 'failingSince' | 'lastFailureAt'>;

/** Attempts of one destination not yet reported: whether one succeeded, and the last failure after it. */
export interface PendingAttempts { succeeded: boolean; failedAt: number | null }

/** Adds an attempt's result (made at `at`) to what is pending: a success forgets the failures before it. */
export function addAttempt(pending: PendingAttempts | undefined, ok: boolean, at: number): PendingAttempts {
  if (ok) return { succeeded: true, failedAt: null };
  return { succeeded: pending?.succeeded ?? false, failedAt: at };
}

/**
 * The failing clock of a destination after the pending attempts, or undefined when nothing worth
 * writing changed. A success stops it (failingSince null); the first failure after a success starts
 * it; later failures only move lastFailureAt, and only every `refreshMs`, so a destination that
 * keeps failing costs one record per writer per `refreshMs`.
 */
export function nextHealth(known: Health | undefined, pending: PendingAttempts, refreshMs: number = HEALTH_REFRESH_MS): Health | undefined {
  let health: Health = { failingSince: known?.failingSince ?? null, lastFailureAt: known?.lastFailureAt ?? null };
  let changed = false;
  if (pending.succeeded && health.failingSince !== null) { health = { failingSince: null, lastFailureAt: health.lastFailureAt }; changed = true; }
  const failedAt = pending.failedAt;
  if (failedAt !== null) {
    if (health.failingSince === null) { health = { failingSince: failedAt, lastFailureAt: failedAt }; changed = true; }
    else if (health.lastFailureAt === null || failedAt - health.lastFailureAt >= refreshMs) { health = { ...health, lastFailureAt: failedAt }; changed = true; }
  }
  return changed ? health : undefined;
}
