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

/** Which policy a task follows, for the trace and the metrics. */
export type RetryPolicySource = 'default' | 'destination';

/** The policy a destination's tasks follow (destination-retry.ts: appliedRetryPolicy), and whose it is. */
export interface AppliedRetryPolicy { source: RetryPolicySource; policy: RetryPolicy }

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

/** A decision and where its wait came from: `step` is the applying policy's tier (from 1). */
export type ScheduledRetry =
  | { action: 'retry'; tier: number; step: number; notBefore: number }
  | { action: 'dead_letter'; reason: 'deadline' };

/**
 * nextRetry under a destination's own policy (docs/decisions/0017-retry-policy-per-destination.md):
 * its delays and deadline, placed on the deployment's tier topics (`topicTiersMs`). The wait of
 * step n goes to the first topic whose delay is at least the step's delay, so it is due no later
 * than anything written behind it there and holds none of it back; a busy topic may try it late,
 * at worst when its topic's delay is up. Retry-After is honoured as under the default policy, and
 * also never beyond the next topic's delay (the most any record may hold its topic back today).
 * A delay outside the topics' range (the deployment's tiers changed after the policy was stored)
 * is brought within it: a wait longer than the longest topic would hold that topic back.
 * Under the default policy it is exactly nextRetry.
 */
export function nextRetryUnder(applied: AppliedRetryPolicy, topicTiersMs: readonly number[], args: RetryArgs): ScheduledRetry {
  const { policy } = applied;
  if (applied.source === 'default') {
    const decision = nextRetry(policy, args);
    return decision.action === 'retry' ? { ...decision, step: decision.tier } : decision;
  }
  const attempt = Number.isFinite(args.attempt) ? Math.max(1, Math.floor(args.attempt)) : 1;
  const step = Math.min(attempt, policy.tiersMs.length);
  const delay = withinTopics(policy.tiersMs[step - 1]!, topicTiersMs);
  const tier = topicFor(delay, topicTiersMs);
  const nextDelay = withinTopics(policy.tiersMs[step] ?? delay, topicTiersMs);
  const ceiling = Math.min(Math.max(nextDelay, delay), Math.max(topicTiersMs[tier] ?? delay, delay));
  const hint = args.retryAfterMs !== undefined && Number.isFinite(args.retryAfterMs) ? args.retryAfterMs : delay;
  const wait = Math.min(Math.max(hint, delay), ceiling);
  const deadline = args.firstAttemptAt + policy.deadlineMs;
  if (args.now >= deadline) return { action: 'dead_letter', reason: 'deadline' };
  return { action: 'retry', tier, step, notBefore: Math.min(args.now + wait, deadline) };
}

/** The tier topic a task with this many attempts was written to under `policy` (0: the delivery topic), for the trace. */
export function tierReadFrom(applied: AppliedRetryPolicy, topicTiersMs: readonly number[], attempt: number): number {
  if (attempt <= 0) return 0;
  if (applied.source === 'default') return Math.min(attempt, topicTiersMs.length);
  const { policy } = applied;
  const step = Math.min(attempt, policy.tiersMs.length);
  return topicFor(withinTopics(policy.tiersMs[step - 1]!, topicTiersMs), topicTiersMs);
}

/** The first tier topic (from 1) whose delay is at least `delayMs`; the longest if none is. */
export function topicFor(delayMs: number, topicTiersMs: readonly number[]): number {
  let best = 0;
  for (const [i, ms] of topicTiersMs.entries()) {
    if (ms >= delayMs && (best === 0 || ms < topicTiersMs[best - 1]!)) best = i + 1;
  }
  if (best > 0) return best;
  let longest = 1;
  for (const [i, ms] of topicTiersMs.entries()) if (ms > topicTiersMs[longest - 1]!) longest = i + 1;
  return longest;
}

function withinTopics(delayMs: number, topicTiersMs: readonly number[]): number {
  return Math.min(delayMs, Math.max(...topicTiersMs));
}
