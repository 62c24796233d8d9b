import type { DeferralTrace, DeferredRange } from '@switchyard/platform/schemas/generated';
import type { AppliedRetryPolicy } from '@switchyard/platform/destination-retry';
import { nextRetryUnder, type RetryPolicy } from '@switchyard/platform/retry-schedule';

/** A held range is closed at this many events, or this wide a span of ingest offsets: what one range record makes delivery read again. */
export const MAX_HELD_EVENTS = 500;
export const MAX_HELD_SPAN = 5000;

interface OpenRange { destinationId: string; sourceId: string; offsets: number[]; messageIds: string[] }

/** A range ready to be written in the batch's transaction: the tier record and its trace. */
export interface HeldRange { tier: number; key: string; range: DeferredRange; trace: DeferralTrace }

/**
 * The tasks of one ingest batch that fan-out does not write because delivery reports their
 * destination refusing (DestinationStates): one DeferredRange per destination and source, naming
 * the ingest offsets of its events (heldOffsets), written to the first retry tier exactly as
 * delivery would have deferred the tasks had fan-out written them. Delivery builds the tasks from
 * the ingest records when the range falls due and the destination answers again.
 */
export class HeldRanges {
  private readonly open = new Map<string, OpenRange>();
  private readonly closed: OpenRange[] = [];

  constructor(private readonly ingestTopic: string, private readonly partition: number) {}

  get size(): number {
    return this.open.size + this.closed.length;
  }

  add(destinationId: string, sourceId: string, offset: number, messageId: string): void {
    // One per source too: a DeferralTrace names one source.
    const key = `${destinationId}\u0000${sourceId}`;
    let range = this.open.get(key);
    if (range && (range.offsets.length >= MAX_HELD_EVENTS || offset - range.offsets[0]! >= MAX_HELD_SPAN)) {
      this.closed.push(range);
      range = undefined;
    }
    if (!range) this.open.set(key, (range = { destinationId, sourceId, offsets: [], messageIds: [] }));
    range.offsets.push(offset);
    range.messageIds.push(messageId);
  }

  /**
   * The ranges as tier records, due like a first deferral by delivery: the first tier of the policy
   * each destination follows (`policyOf`: its own or the deployment's) from `now`, placed on the
   * deployment's tier topics (`topicTiersMs`).
   */
  records(policyOf: (destinationId: string) => AppliedRetryPolicy, topicTiersMs: readonly number[], now: number): HeldRange[] {
    return [...this.closed, ...this.open.values()].map(({ destinationId, sourceId, offsets, messageIds }) => {
      const applied = policyOf(destinationId);
      const decision = nextRetryUnder(applied, topicTiersMs, { attempt: 1, firstAttemptAt: now, now });
      // Never dropped: fan-out holds nothing under a policy without time (mayHold; a destination's deadline is at least 1 s).
      if (decision.action === 'dead_letter') throw new Error('held tasks need a retry deadline above zero');
      return {
        tier: decision.tier,
        key: `${destinationId}:range:${this.partition}`,
        range: {
          destinationId, topic: this.ingestTopic, partition: this.partition, fromOffset: offsets[0]!, toOffset: offsets.at(-1)!, tasks: offsets.length,
          attempt: 1, firstAttemptAt: now, deadline: now + applied.policy.deadlineMs, notBefore: decision.notBefore, lastError: 'circuit_open', heldOffsets: offsets,
        },
        trace: { destinationId, sourceId, messageIds, error: 'circuit_open', attempt: 1, at: now, nextTier: decision.tier, notBefore: decision.notBefore, retryPolicy: applied.source },
      };
    });
  }
}

/** Whether fan-out may hold tasks under this policy: a zero deadline dead-letters every deferral, so tasks are written. */
export function mayHold(policy: RetryPolicy): boolean {
  return policy.deadlineMs > 0;
}
