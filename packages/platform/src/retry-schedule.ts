/**
 * When a task that should be retried is tried next, or that it is out of time
 * (docs/decisions/0014-retry-tiers-and-deadline.md). Pure: the attempt count, the first attempt's time and the clock come in as arguments, so
 * tiers and the deadline are tested with a fake clock.
 *
 * Tier topics have fixed delays; attempt n waits in tier min(n, tiers) — the last tier repeats.
 * Retry-After is honoured within the tier's bounds: it never shortens the tier's delay (a receiver
 * cannot make us retry faster than the schedule) and lengthens it at most to the next tier's delay
 * (the last tier: not at all). A tier topic is read in order, so a record waiting longer than its
 * tier holds back the records behind it; the bound caps that.
 * Retries go on until the deadline (first attempt + deadlineMs): a wait that would end past it is
 * cut short so that a final attempt happens at the deadline (with the default tiers, 3 h 11 min
 * would otherwise be the last try and the last 49 minutes never tried). That record keeps its
 * tier: waiting less than its tier's delay, it holds back nothing queued behind it, and it is
 * tried at the deadline or, at worst, when the records ahead of it in its partition are due.
 * A task whose attempt ends at or after the deadline is dead-lettered.
 */
export interface RetryPolicy {
  /** Delay of each retry tier, in milliseconds; the last one repeats. */
  tiersMs: readonly number[];
  /** How long after the first attempt a task may still be tried. */
  deadlineMs: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = Object.freeze({
  tiersMs: Object.freeze([10_000, 60_000, 600_000, 3_600_000]),
  deadlineMs: 4 * 3_600_000,
});

export type RetryDecision =
  | { action: 'retry'; tier: number; notBefore: number }
  | { action: 'dead_letter'; reason: 'deadline' };

export interface RetryArgs {
  /** Attempts made so far, the one that just failed included (≥ 1). */
  attempt: number;
  firstAttemptAt: number;
  now: number;
  retryAfterMs?: number | undefined;
}

/** Checks a policy once, where it is built from configuration; nextRetry trusts it. */
export function validateRetryPolicy(policy: RetryPolicy): RetryPolicy {
  if (policy.tiersMs.length === 0) throw new RangeError('retry policy needs at least one tier');
  for (const [i, ms] of policy.tiersMs.entries()) {
    if (!Number.isFinite(ms) || ms <= 0) throw new RangeError(`retry tier ${i + 1} delay must be a positive number of ms, got ${ms}`);
  }
  if (!Number.isFinite(policy.deadlineMs) || policy.deadlineMs < 0) throw new RangeError(`retry deadline must be a non-negative number of ms, got ${policy.deadlineMs}`);
  return Object.freeze({ tiersMs: Object.freeze([...policy.tiersMs]), deadlineMs: policy.deadlineMs });
}

export function nextRetry(policy: RetryPolicy, args: RetryArgs): RetryDecision {
  const { tiersMs } = policy;
  // The count comes from a record header; a bad one is read as the first attempt, not a crash.
  const attempt = Number.isFinite(args.attempt) ? Math.max(1, Math.floor(args.attempt)) : 1;
  const tier = Math.min(attempt, tiersMs.length);
  const delay = tiersMs[tier - 1]!;
  const ceiling = tiersMs[tier] ?? delay;
  const hint = args.retryAfterMs !== undefined && Number.isFinite(args.retryAfterMs) ? args.retryAfterMs : delay;
  const wait = Math.min(Math.max(hint, delay), Math.max(ceiling, delay));
  const deadline = args.firstAttemptAt + policy.deadlineMs;
  if (args.now >= deadline) return { action: 'dead_letter', reason: 'deadline' };
  return { action: 'retry', tier, notBefore: Math.min(args.now + wait, deadline) };
}
