import type { DeferredRange, DeliveryTask } from '@switchyard/platform/schemas/generated';

/**
 * Why a task is set aside without a request: its destination refuses (`circuit_open`,
 * `overloaded`: a deferral, which counts as an attempt) or is over its rate limit (`rate_limited`:
 * held, which does not; docs/decisions/0018-destination-rate-limits.md).
 */
export type DeferReason = RefusalReason | 'rate_limited';
/** Why a destination takes no request now. */
export type RefusalReason = 'circuit_open' | 'overloaded';

/** A hold, not a failed attempt. */
export function isHold(reason: DeferReason): boolean {
  return reason === 'rate_limited';
}

/**
 * Tasks of one destination deferred from one fetched batch of a delivery-topic partition, to be
 * written as one DeferredRange record: every task of the destination that was never attempted
 * between `from` and `to` belongs to it.
 */
export interface PendingRange {
  destinationId: string;
  topic: string;
  partition: number;
  from: string;
  to: string;
  /** The tasks and their offsets, in offset order: each offset stays unfinished until the range is written. */
  tasks: DeliveryTask[];
  offsets: string[];
  reasons: DeferReason[];
}

/** A range is written once it holds this many tasks: a bound on what one record makes delivery read again. */
export const MAX_RANGE_TASKS = 500;
/** ... or spans this many offsets (other destinations' tasks in between are read again too). */
export const MAX_RANGE_SPAN = 5000;

/**
 * A task that may join a range: never attempted, read from the delivery topic (so it is still there,
 * where fan-out wrote it) and meant for every URL of its destination. Tier records and dead-letter
 * replays with an attempt history are deferred one by one as before.
 */
export function mayJoinRange(task: DeliveryTask): boolean {
  return task.attempt === 0 && task.firstAttemptAt === null && task.pendingUrls === null && task.notBefore === null;
}

/**
 * The ranges of one batch, one open per destination. A range ends (and is handed back to be
 * written) when it is full, when a task of its destination is not deferred (the range must hold
 * only deferred tasks of the destination, or reading it again would send that task twice), or when
 * the batch is left.
 */
export class BatchRanges {
  private readonly open = new Map<string, PendingRange>();

  constructor(private readonly topic: string, private readonly partition: number) {}

  get size(): number {
    return this.open.size;
  }

  /**
   * Adds a deferred task; returns a range it closed (full, too wide to take it, or of the other
   * kind: a range is all holds or all deferrals, since only deferrals count an attempt), to be
   * written now.
   */
  add(task: DeliveryTask, offset: string, reason: DeferReason): PendingRange | undefined {
    const key = task.destinationId;
    const range = this.open.get(key);
    if (range && Number(offset) - Number(range.from) < MAX_RANGE_SPAN && isHold(range.reasons[0]!) === isHold(reason)) {
      range.to = offset;
      range.tasks.push(task);
      range.offsets.push(offset);
      range.reasons.push(reason);
      if (range.tasks.length < MAX_RANGE_TASKS) return undefined;
      this.open.delete(key);
      return range;
    }
    this.open.set(key, { destinationId: key, topic: this.topic, partition: this.partition, from: offset, to: offset, tasks: [task], offsets: [offset], reasons: [reason] });
    return range;
  }

  /** A task of this destination that is not deferred: its open range ends before it. */
  end(destinationId: string): PendingRange | undefined {
    const range = this.open.get(destinationId);
    if (range) this.open.delete(destinationId);
    return range;
  }

  /** Every open range; none is left open. */
  drain(): PendingRange[] {
    const all = [...this.open.values()];
    this.open.clear();
    return all;
  }
}

/**
 * What is left of a range from `fromOffset` on (`tasks` of them): of a range fan-out held, only the
 * held offsets from there.
 */
export function restOfRange(range: DeferredRange, fromOffset: number, tasks: number): DeferredRange {
  return { ...range, fromOffset, tasks, heldOffsets: range.heldOffsets ? range.heldOffsets.filter((o) => o >= fromOffset) : null };
}

/**
 * A task of a range as it is run again: the range's attempt count, first attempt and deadline. A
 * range of attempt 0 was only held (rate limit): its tasks are as fan-out wrote them.
 */
export function resumedFromRange(task: DeliveryTask, range: Pick<DeferredRange, 'attempt' | 'firstAttemptAt' | 'deadline' | 'lastError'>): DeliveryTask {
  if (range.attempt === 0) return task;
  return { ...task, attempt: range.attempt, firstAttemptAt: range.firstAttemptAt, deadline: range.deadline, lastError: range.lastError };
}
