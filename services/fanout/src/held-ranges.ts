import type { DeferralTrace, DeferredRange } from '@switchyard/platform/schemas/generated';
import type { AppliedRetryPolicy } from '@switchyard/platform/destination-retry';
import type { HoldReason } from '@switchyard/platform/holds/destination-states';
import { nextRetryUnder, type RetryPolicy } from '@switchyard/platform/retry-schedule';

/** A held range is closed at this many events, or this wide a span of ingest offsets: what one range record makes delivery read again. */
export const MAX_HELD_EVENTS = 500;
export const MAX_HELD_SPAN = 5000;

interface OpenRange { destinationId: string; sourceId: string; reason: HoldReason; offsets: number[]; messageIds: string[] }

/** A range ready to be written in the batch's transaction: the tier record and its trace (none for a rate limit's hold, which counts no attempt). */
export interface HeldRange { tier: number; key: string; range: DeferredRange; trace?: DeferralTrace }

/**
 * The tasks of one ingest batch that fan-out does not write because delivery reports their
 * destination refusing (DestinationStates): one DeferredRange per destination and source, naming
 * the ingest offsets of its events (heldOffsets), written to a retry tier exactly as delivery would
 * have deferred (every circuit open: attempt 1) or held (over its rate limit: attempt 0, the first
 * tier) the tasks had fan-out written them. Delivery builds the tasks from the ingest records when
 * the range falls due and the destination takes them.
 */
export class HeldRanges {
  private readonly open = new Map<string, OpenRange>();
  private readonly closed: OpenRange[] = [];

  constructor(private readonly ingestTopic: string, private readonly partition: number) {}

  get size(): number {
    return this.open.size + this.closed.length;
  }

  add(destinationId: string, sourceId: string, offset: number, messageId: string, reason: HoldReason): void {
    // One per source too: a DeferralTrace names one source.
    const key = `${destinationId}\u0000${sourceId}`;
    let range = this.open.get(key);
    if (range && (range.offsets.length >= MAX_HELD_EVENTS || offset - range.offsets[0]! >= MAX_HELD_SPAN)) {
      this.closed.push(range);
      range = undefined;
    }
    if (!range) this.open.set(key, (range = { destinationId, sourceId, reason, offsets: [], messageIds: [] }));
    range.offsets.push(offset);
    range.messageIds.push(messageId);
  }

  /**
   * The ranges as tier records. Held for a refusing destination: due like a first deferral by
   * delivery, the first tier of the policy it follows (`policyOf`: its own or the deployment's) from
   * `now`, placed on the deployment's tier topics (`topicTiersMs`). Held for a rate limit: like
   * delivery's hold, attempt 0 in the first tier topic, due after its delay, no deadline started.
   */
  records(policyOf: (destinationId: string) => AppliedRetryPolicy, topicTiersMs: readonly number[], now: number): HeldRange[] {
    return [...this.closed, ...this.open.values()].map(({ destinationId, sourceId, reason, offsets, messageIds }) => {
      const key = `${destinationId}:range:${this.partition}`;
      const where = { destinationId, topic: this.ingestTopic, partition: this.partition, fromOffset: offsets[0]!, toOffset: offsets.at(-1)!, tasks: offsets.length, heldOffsets: offsets };
      if (reason === 'rate_limited') {
        // firstAttemptAt is when the tasks were made (their createdAt); an attempt-0 range starts no deadline.
        return { tier: 1, key, range: { ...where, attempt: 0, firstAttemptAt: now, deadline: 0, notBefore: now + topicTiersMs[0]!, lastError: reason } };
      }
      const applied = policyOf(destinationId);
      const decision = nextRetryUnder(applied, topicTiersMs, { attempt: 1, firstAttemptAt: now, now });
      // Never dropped: fan-out holds nothing under a policy without time (mayHold; a destination's deadline is at least 1 s).
      if (decision.action === 'dead_letter') throw new Error('held tasks need a retry deadline above zero');
      return {
        tier: decision.tier, key,
        range: { ...where, attempt: 1, firstAttemptAt: now, deadline: now + applied.policy.deadlineMs, notBefore: decision.notBefore, lastError: reason },
        trace: { destinationId, sourceId, messageIds, error: reason, attempt: 1, at: now, nextTier: decision.tier, notBefore: decision.notBefore, retryPolicy: applied.source },
      };
    });
  }
}

/** Whether fan-out may hold tasks under this policy: a zero deadline dead-letters every deferral, so tasks are written. */
export function mayHold(policy: RetryPolicy): boolean {
  return policy.deadlineMs > 0;
}
