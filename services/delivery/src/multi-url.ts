import type { DeadLetterReason, Outcome } from './outcome.js';

/**
 * The outcomes of one task's POSTs to its destination's URLs (up to five) → the task's verdict
 * (docs/decisions/0006-multiple-urls-per-destination.md). One acceptance is enough and ends the
 * task; a retry goes only to the URLs that may still accept; the task is dead only when every URL
 * has failed permanently.
 */
export type UrlOutcome = { url: string; outcome: Outcome };
export type UrlFailure = { url: string; reason: DeadLetterReason };

export type TaskVerdict =
  | { verdict: 'accepted'; acceptedUrl: string }
  | { verdict: 'retry'; retryUrls: string[]; retryAfterMs?: number; reason: string }
  | { verdict: 'permanent'; reason: DeadLetterReason; failures: UrlFailure[] };

export function combineUrlOutcomes(results: UrlOutcome[]): TaskVerdict {
  // A task always has at least one URL (the destination schema requires one); none means the
  // caller lost them, and guessing a verdict would hide that bug.
  if (results.length === 0) throw new RangeError('combineUrlOutcomes needs the outcome of at least one URL');

  const accepted = results.find((r) => r.outcome.verdict === 'accepted');
  // The others are not retried, even those that failed: the receiver has the message.
  if (accepted) return { verdict: 'accepted', acceptedUrl: accepted.url };

  const retryUrls: string[] = [];
  let reason: string | undefined;
  let retryAfterMs: number | undefined;
  const failures: UrlFailure[] = [];
  for (const { url, outcome } of results) {
    if (outcome.verdict === 'retry') {
      // The same URL listed twice is sent once.
      if (!retryUrls.includes(url)) retryUrls.push(url);
      reason ??= outcome.reason;
      // The most patient receiver sets the pace: retrying sooner would ignore its Retry-After.
      if (outcome.retryAfterMs !== undefined) retryAfterMs = Math.max(retryAfterMs ?? 0, outcome.retryAfterMs);
    } else if (outcome.verdict === 'permanent') {
      failures.push({ url, reason: outcome.reason });
    }
  }
  if (retryUrls.length > 0) {
    const retry = { verdict: 'retry' as const, retryUrls, reason: reason ?? 'retry' };
    return retryAfterMs === undefined ? retry : { ...retry, retryAfterMs };
  }
  return { verdict: 'permanent', reason: failures[0]!.reason, failures };
}
