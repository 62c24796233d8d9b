import { formatDuration, parseStrictDuration } from './durations.js';
import type { AppliedRetryPolicy, RetryPolicy, RetryPolicySource } from './retry-schedule.js';
import type { Destination, DestinationRetryPolicy } from './schemas/generated.js';

/**
 * A destination's own retry policy (docs/decisions/0017-retry-policy-per-destination.md): which
 * policy applies to a destination, and the limits a stored one must keep. Pure.
 *
 * Its tier delays must lie within the deployment's retry-tier topics (each topic has one fixed
 * delay, and a wait is placed in the topic whose delay covers it), so the limits follow from
 * SWITCHYARD_RETRY_TIERS; the deadline is bounded because the delivery topic and the tiers keep
 * records 7 days and the trace index reaches back 24 h.
 */
export const MIN_RETRY_DEADLINE_MS = 1_000;
export const MAX_RETRY_DEADLINE_MS = 24 * 3_600_000;
/** More tiers than this says nothing the last repeating tier does not. */
export const MAX_RETRY_TIERS = 20;

export interface RetryPolicyLimits {
  minTierMs: number;
  maxTierMs: number;
  minDeadlineMs: number;
  maxDeadlineMs: number;
}

/** The limits a destination's policy must keep under this deployment's tier delays. */
export function retryPolicyLimits(deploymentTiersMs: readonly number[]): RetryPolicyLimits {
  return {
    minTierMs: Math.min(...deploymentTiersMs), maxTierMs: Math.max(...deploymentTiersMs),
    minDeadlineMs: MIN_RETRY_DEADLINE_MS, maxDeadlineMs: MAX_RETRY_DEADLINE_MS,
  };
}

/** A policy as the admin API and the seed file write it. */
export interface RetryPolicyText { tiers: readonly string[]; deadline: string }

export type RetryPolicyCheck =
  | { ok: true; policy: DestinationRetryPolicy }
  | { ok: false; field: string; message: string };

/** Checks a written policy against the limits; a refusal names the field (`tiers[1]`, `deadline`). */
export function checkRetryPolicy(text: RetryPolicyText, limits: RetryPolicyLimits): RetryPolicyCheck {
  if (text.tiers.length === 0) return { ok: false, field: 'tiers', message: 'at least one tier is required' };
  if (text.tiers.length > MAX_RETRY_TIERS) return { ok: false, field: 'tiers', message: `at most ${MAX_RETRY_TIERS} tiers` };
  const tiersMs: number[] = [];
  for (const [i, tier] of text.tiers.entries()) {
    const ms = parseStrictDuration(tier);
    const field = `tiers[${i}]`;
    if (ms === undefined) return { ok: false, field, message: `${JSON.stringify(tier)} is not a duration such as 500ms, 30s, 5m or 1h` };
    if (ms < limits.minTierMs || ms > limits.maxTierMs) {
      return { ok: false, field, message: `${tier} is outside this deployment's retry tiers: from ${formatDuration(limits.minTierMs)} to ${formatDuration(limits.maxTierMs)} (SWITCHYARD_RETRY_TIERS)` };
    }
    tiersMs.push(ms);
  }
  const deadlineMs = parseStrictDuration(text.deadline);
  if (deadlineMs === undefined) return { ok: false, field: 'deadline', message: `${JSON.stringify(text.deadline)} is not a duration such as 30m or 4h` };
  if (deadlineMs < limits.minDeadlineMs || deadlineMs > limits.maxDeadlineMs) {
    return { ok: false, field: 'deadline', message: `the deadline must be from ${formatDuration(limits.minDeadlineMs)} to ${formatDuration(limits.maxDeadlineMs)}` };
  }
  return { ok: true, policy: { tiersMs, deadlineMs } };
}

/** A stored policy as the API shows it. */
export function retryPolicyText(policy: DestinationRetryPolicy): RetryPolicyText {
  return { tiers: policy.tiersMs.map(formatDuration), deadline: formatDuration(policy.deadlineMs) };
}

export type { AppliedRetryPolicy, RetryPolicySource };

const appliedOf = new WeakMap<DestinationRetryPolicy, AppliedRetryPolicy>();

/**
 * The policy a destination's tasks follow: its own, or the deployment's. A destination that is
 * gone, or has none, follows the deployment's. Built once per stored policy object (a config
 * change replaces it), not per task.
 */
export function appliedRetryPolicy(destination: Pick<Destination, 'retry'> | undefined, deployment: RetryPolicy): AppliedRetryPolicy {
  const own = destination?.retry;
  if (!own || own.tiersMs.length === 0) return { source: 'default', policy: deployment };
  let applied = appliedOf.get(own);
  if (!applied) appliedOf.set(own, (applied = { source: 'destination', policy: Object.freeze({ tiersMs: Object.freeze([...own.tiersMs]), deadlineMs: own.deadlineMs }) }));
  return applied;
}
