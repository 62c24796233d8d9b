import { COMMIT_STALL_RECHECK_MS } from '@switchyard/platform/consuming/commit-scheduler';
import type { DeferReason, RefusalReason } from './deferred-ranges.js';
import { WAIT_IN_MEMORY_MS } from './rate-limits.js';

/**
 * Admission: what delivery does with a record it has just read, decided from what it knows at that
 * moment and nothing else. Pure, so every case is a row of admission.test.ts; the consumer
 * (delivery-consumer.ts) gathers the facts, asks, and carries out the answer: slots, seeks, timers
 * and writes are all its own.
 */

/** What delivery knows of a task's destination now. */
export interface DestinationView {
  /** Every circuit of the URLs the task would try is open. */
  circuitOpen: boolean;
  /** Every request slot is taken and its queue is full. */
  full: boolean;
  /** Full, and none of its requests finished for a while (stall-detector.ts). */
  stalled: boolean;
  /**
   * Its rate limit, when it has one: how long until a token comes, 0 when one is there now,
   * undefined when none ever comes (a limit of 0 at this instance's share).
   */
  rate?: { tokenInMs: number | undefined };
}

export interface AdmissionInput {
  now: number;
  /** The record's due time (a tier record's, or a held range's), null when due at once. */
  notBefore: number | null;
  /** No heartbeat has confirmed this member's place in the group lately, even after one was sent. */
  membershipUnconfirmed: boolean;
  /** Offset commits have failed for a while: nothing new starts until they go through. */
  commitsStalled: boolean;
  /**
   * A deferred range that fell due (in a tier), or a task. `joinable`: the task may join its
   * destination's open range of this batch (deferred-ranges.ts: read from the delivery topic,
   * never attempted, for every URL).
   */
  record: { kind: 'range' } | { kind: 'task'; joinable: boolean; destination: DestinationView };
}

export type WaitReason = 'membership_unconfirmed' | 'not_due' | 'commits_stalled';

export type Admission =
  /** Seek back to the record and read it again after `ms`; the partition waits, no other does. */
  | { action: 'wait'; ms: number; reason: WaitReason }
  /** The destination's queue is full but it answers: the partition waits until the queue drains. */
  | { action: 'wait_for_destination' }
  /** Read the range's tasks back (or defer it again) in a deferral slot. */
  | { action: 'release_range' }
  /** Leave the task in the delivery topic, in its destination's range of this batch. */
  | { action: 'join_range'; reason: DeferReason }
  /** Write the task to the retry tier without a request (a deferral, or a hold), in a deferral slot. */
  | { action: 'defer'; reason: DeferReason }
  /** Take the rate limit's next token, which is still to come, and send when it does (within WAIT_IN_MEMORY_MS). */
  | { action: 'wait_for_token' }
  /** Send now, in a request slot; `takesToken`: the destination's rate limit has a token for it. */
  | { action: 'dispatch'; takesToken: boolean };

const wait = (ms: number, reason: WaitReason): Admission => ({ action: 'wait', ms, reason });

export function admit(input: AdmissionInput): Admission {
  const { now, notBefore, record } = input;
  if (input.membershipUnconfirmed) return wait(COMMIT_STALL_RECHECK_MS, 'membership_unconfirmed');
  if (notBefore !== null && notBefore > now) return wait(notBefore - now, 'not_due');
  if (input.commitsStalled) return wait(COMMIT_STALL_RECHECK_MS, 'commits_stalled');
  if (record.kind === 'range') return { action: 'release_range' };
  const { destination } = record;
  if (!destination.circuitOpen && destination.full && !destination.stalled) return { action: 'wait_for_destination' };
  const reason = refusalOf(destination) ?? rateHold(destination);
  if (reason) return record.joinable ? { action: 'join_range', reason } : { action: 'defer', reason };
  const tokenInMs = destination.rate?.tokenInMs;
  if (tokenInMs !== undefined && tokenInMs > 0) return { action: 'wait_for_token' };
  return { action: 'dispatch', takesToken: destination.rate !== undefined };
}

/** Why a destination takes no request now (every circuit open, or full and stalled), if it does not. */
export function refusalOf(destination: Pick<DestinationView, 'circuitOpen' | 'full' | 'stalled'>): RefusalReason | undefined {
  if (destination.circuitOpen) return 'circuit_open';
  if (destination.full && destination.stalled) return 'overloaded';
  return undefined;
}

/** Over its rate limit with no token within WAIT_IN_MEMORY_MS: held, without an attempt. */
function rateHold({ rate }: DestinationView): 'rate_limited' | undefined {
  if (!rate) return undefined;
  return rate.tokenInMs === undefined || rate.tokenInMs > WAIT_IN_MEMORY_MS ? 'rate_limited' : undefined;
}
