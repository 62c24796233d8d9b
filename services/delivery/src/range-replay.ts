import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from '@switchyard/platform/logger';
import type { FetchedRecord } from '@switchyard/platform/kafka/groupless-reader';
import type { DeferredRange, DeliveryTask } from '@switchyard/platform/schemas/generated';
import { refusalOf } from './admission.js';
import { RANGE_WAIT_POLL_MS, type GroupAssignment } from './assignment.js';
import type { CommitScheduler } from '@switchyard/platform/consuming/commit-scheduler';
import { restOfRange, resumedFromRange, type DeferReason, type PendingRange, type RefusalReason } from './deferred-ranges.js';
import type { DeliveryMetrics } from './delivery-metrics.js';
import type { OffsetTracker } from '@switchyard/platform/consuming/offset-tracker';
import { DEFERRALS, type PauseControl } from './pause-control.js';
import type { RangeTasks } from './range-tasks.js';
import { LATE_MS, WAIT_IN_MEMORY_MS, type RateLimits } from './rate-limits.js';
import type { StallDetector } from './stall-detector.js';
import type { TaskRunner } from './task-runner.js';
import type { TaskSlots } from './task-slots.js';

export interface RangeReplayOptions {
  runner: TaskRunner;
  /** Committed records of a partition, `from` to `to` inclusive (DeliveryConsumerOptions.readRange). */
  readRange: (topic: string, partition: number, from: bigint, to: bigint) => Promise<FetchedRecord[]>;
  metrics: Pick<DeliveryMetrics, 'deferredRanges' | 'rateLimited'>;
  logger: Logger;
  clock: () => number;
  slots: TaskSlots;
  pauses: PauseControl;
  commits: CommitScheduler;
  group: GroupAssignment;
  stalls: StallDetector;
  rangeTasks: RangeTasks;
  /** Destination rate limits at this instance's share. */
  rates: RateLimits;
  /** How long a held task or range waits in the first tier (its delay): how far ahead a range's run reserves tokens. */
  holdMs: number;
  /** Runs a task holding a global slot (taken by the caller, released as it ends); true once it reached an outcome. */
  runInSlots: (task: DeliveryTask, held: string) => Promise<boolean>;
  stopping: () => boolean;
}

/**
 * Work that takes a deferral slot instead of a request slot, and the ranges of deferred tasks: a
 * task sent to the retry tier without a request, a batch's run of never-attempted tasks written as
 * one range record, and a range record that fell due, run again from the records it names.
 */
export class RangeReplay {
  constructor(private readonly opts: RangeReplayOptions) {}

  /**
   * A task sent to the retry tier without a request (deferred, or held by its rate limit); one that
   * failed (shutdown) leaves its offset unfinished: the task is read again.
   */
  async deferTask(task: DeliveryTask, reason: DeferReason, tracker: OffsetTracker, offset: string): Promise<void> {
    const { slots } = this.opts;
    try {
      if (reason === 'rate_limited') await this.opts.runner.hold(task);
      else await this.opts.runner.defer(task, reason);
      tracker.complete(offset);
      this.opts.commits.requestCommit();
    } catch (err) {
      this.opts.logger.warn({ err, taskId: task.taskId }, 'task left unfinished');
    } finally {
      slots.deferrals.release();
      if (slots.deferrals.active <= slots.deferrals.limit / 2) this.opts.pauses.resumeBlocked(DEFERRALS);
      slots.taskEnded();
    }
  }

  /** Writes a range of deferred tasks (one tier record); its tasks' offsets are finished once it is in Kafka. */
  writeRange(range: PendingRange, tracker: OffsetTracker): void {
    this.opts.slots.taskStarted();
    this.opts.runner.deferRange(range).then(() => {
      for (const offset of range.offsets) tracker.complete(offset);
      this.opts.commits.requestCommit();
    }, (err: unknown) => {
      this.opts.logger.warn({ err, destinationId: range.destinationId, tasks: range.tasks.length }, 'deferred tasks left unfinished');
    }).finally(() => this.opts.slots.taskEnded());
  }

  /**
   * A range record that fell due (read from `topic`:`partition`, a tier); it is finished once every
   * task in it reached an outcome or was deferred again, or what was left of it when shutdown cut
   * its run short was written back.
   */
  async releaseRange(range: DeferredRange, topic: string, partition: number, tracker: OffsetTracker, offset: string): Promise<void> {
    const { slots } = this.opts;
    let done = false;
    try {
      done = await this.runRange(range, topic, partition);
    } catch (err) {
      this.opts.logger.warn({ err, destinationId: range.destinationId, partition: range.partition, fromOffset: range.fromOffset }, 'deferred range left unfinished');
    } finally {
      slots.deferrals.release();
      if (slots.deferrals.active <= slots.deferrals.limit / 2) this.opts.pauses.resumeBlocked(DEFERRALS);
      slots.taskEnded();
    }
    if (done) { tracker.complete(offset); this.opts.commits.requestCommit(); }
  }

  /** Why a destination takes no request now (every circuit open, or full and stalled), if it does not. */
  private refusal(destinationId: string): RefusalReason | undefined {
    const circuitOpen = this.opts.runner.destinationRefuses(destinationId);
    const full = !circuitOpen && this.opts.slots.destinationFull(destinationId);
    return refusalOf({ circuitOpen, full, stalled: full && this.opts.stalls.confirmedStalled(destinationId) });
  }

  /**
   * The destination still refuses: the range is deferred again as it is, unread. Otherwise its tasks
   * are read from the delivery topic and run like tier records (their attempt count and deadline
   * are the range's); if the destination refuses again part-way, the rest is deferred as a range.
   * Past the deadline every task is run, which dead-letters it unless its last attempt succeeds.
   *
   * The range record's offset is one for all its tasks, so a run must not outlive this member's hold
   * on the record's partition (`tierTopic`:`tierPartition`): the next owner runs the range again, and
   * every task both sent would reach the receiver twice. While the group rebalances the run waits;
   * it goes on if this member keeps the partition and stops if not. Shutdown stops it too, and
   * writes what is left back to the tier (the member still commits): the next owner then sends
   * only the tasks this one did not finish.
   */
  private async runRange(range: DeferredRange, tierTopic: string, tierPartition: number): Promise<boolean> {
    const { runner, slots } = this.opts;
    const held = `${tierTopic}:${tierPartition}`;
    const heldSince = this.opts.group.heldSinceOf(held);
    const refused = this.refusal(range.destinationId);
    if (refused && await runner.deferRangeAgain(range, refused)) return true;
    // Its rate limit's tokens for the range, taken at once up to the first tier's delay ahead. None
    // before the range would fall due again: held again as one record, unread. Reading it would
    // cost the whole offset span (other destinations' tasks too) each time a large held backlog
    // comes round, and slow every other destination.
    const perSecond = runner.rateLimitOf(range.destinationId);
    const tokens = perSecond === undefined ? undefined : this.opts.rates.reserveUpTo(range.destinationId, perSecond, range.tasks, this.opts.holdMs);
    if (tokens?.length === 0) {
      await runner.holdRangeAgain(range);
      return true;
    }
    let records: FetchedRecord[];
    try {
      records = await this.opts.readRange(range.topic, range.partition, BigInt(range.fromOffset), BigInt(range.toOffset));
    } catch (err) {
      if ((err as Error).name !== 'OffsetOutOfRangeError') throw err;
      // Only if the topic keeps records for less than the deadline (setup makes it 7 days).
      this.opts.metrics.deferredRanges.inc({ event: 'lost' });
      this.opts.logger.error({ err, ...range }, `deferred tasks are no longer in ${range.topic}: they cannot be delivered`);
      return true;
    }
    this.opts.metrics.deferredRanges.inc({ event: 'read' });
    const tasks = await this.opts.rangeTasks.tasksOfRange(records, range);
    const runs: Array<Promise<boolean>> = [];
    let restSetAside = false;
    for (const [i, { offset, task }] of tasks.entries()) {
      // Past the tokens it got: the rest is held as a range again (its tasks unread until then), and
      // this run ends with what it sent.
      const token = tokens ? (i < tokens.length ? await this.awaitToken(tokens[i]!, range.destinationId, held, heldSince) : 'hold') : 'go';
      if (token === 'hold') { await runner.holdRangeAgain(restOfRange(range, Number(offset), tasks.length - i)); restSetAside = true; break; }
      if (token !== 'go') return token === 'lost' ? false : this.cutShort(range, tierTopic, tasks, runs);
      // Room in the destination's queue, or a refusal. Past the deadline too: sent at once, each
      // task held a global slot while it queued for the destination's.
      let refusing: RefusalReason | undefined;
      while (!this.opts.stopping()) {
        refusing = this.refusal(range.destinationId);
        if (refusing || !slots.destinationFull(range.destinationId)) break;
        await sleep(RANGE_WAIT_POLL_MS);
      }
      if (refusing && await runner.deferRangeAgain(restOfRange(range, Number(offset), tasks.length - i), refusing)) { restSetAside = true; break; }
      if (refusing) {
        // Past the deadline, refused: dead-lettered (reason deadline) without a request or a slot.
        const next = await this.rangeMayGoOn(held, heldSince);
        if (next !== 'go') return next === 'lost' ? false : this.cutShort(range, tierTopic, tasks, runs);
        runs.push(this.deadLetterRefused(resumedFromRange(task, range), refusing));
        continue;
      }
      if (this.opts.stopping() || !(await slots.acquireUnlessStopping())) return this.cutShort(range, tierTopic, tasks, runs);
      // Looked at with the slot in hand: waiting for one may have outlasted the hold.
      const next = await this.rangeMayGoOn(held, heldSince);
      if (next !== 'go') {
        slots.global.release();
        return next === 'lost' ? false : this.cutShort(range, tierTopic, tasks, runs);
      }
      slots.taskStarted();
      runs.push(this.opts.runInSlots(resumedFromRange(task, range), held));
    }
    if (!restSetAside) this.backlogGone(range.destinationId);
    return (await Promise.all(runs)).every(Boolean);
  }

  /**
   * A range ran to its end: if a task of its destination arriving now would not be held (no rate
   * limit, or a token within the wait in memory), fan-out may write its tasks again.
   */
  private backlogGone(destinationId: string): void {
    const perSecond = this.opts.runner.rateLimitOf(destinationId);
    if (perSecond === undefined || !this.opts.rates.wouldHold(destinationId, perSecond, WAIT_IN_MEMORY_MS)) this.opts.runner.underLimit(destinationId);
  }

  /** Waits for a token of the range's (reserved at `at`) unless it is there already. */
  private async awaitToken(at: number, destinationId: string, held: string, heldSince: number | undefined): Promise<'go' | 'hold' | 'stop' | 'lost'> {
    if (at <= this.opts.clock()) return 'go';
    this.opts.rates.waitStarted();
    return this.awaitReserved(at, destinationId, held, heldSince);
  }

  /**
   * Waits until a reserved token's time (a wait RateLimits.decide counted), then while the task may
   * not be sent (rangeMayGoOn). Waiting holds no slot. A token whose time a rebalance or a freeze
   * overran by more than LATE_MS is reserved again, however far ahead (the task is in memory
   * already), so that the requests it delayed do not all go at once; 'hold' only if this instance
   * has no share left.
   */
  async awaitReserved(at: number, destinationId: string, held: string, heldSince: number | undefined): Promise<'go' | 'hold' | 'stop' | 'lost'> {
    const { rates, runner, clock } = this.opts;
    for (let reservedAt = at; ;) {
      this.opts.metrics.rateLimited.inc({ destination: destinationId, action: 'waited' });
      let next: 'go' | 'stop' | 'lost';
      try {
        await sleep(Math.max(0, reservedAt - clock()));
        next = await this.rangeMayGoOn(held, heldSince);
      } finally {
        rates.waited();
      }
      if (next !== 'go' || clock() - reservedAt <= LATE_MS) return next;
      const perSecond = runner.rateLimitOf(destinationId);
      if (perSecond === undefined) return 'go';
      const decision = rates.decide(destinationId, perSecond, Number.POSITIVE_INFINITY);
      if (decision.action !== 'wait') return decision.action === 'send' ? 'go' : 'hold';
      reservedAt = decision.at;
    }
  }

  /** A range's task past its deadline whose destination refuses: defer() finds no time left and dead-letters it. */
  private async deadLetterRefused(task: DeliveryTask, reason: RefusalReason): Promise<boolean> {
    try {
      await this.opts.runner.defer(task, reason);
      return true;
    } catch (err) {
      this.opts.logger.warn({ err, taskId: task.taskId }, 'task left unfinished');
      return false;
    }
  }

  /**
   * Whether a range's run may send its next task: 'go'; 'stop' once shutdown began; 'lost' once the
   * partition holding the range record is no longer this member's without a break. While the group
   * rebalances, no heartbeat confirmed membership lately (a frozen or starved process), or offset
   * commits stall, it waits.
   */
  private async rangeMayGoOn(held: string, heldSince: number | undefined): Promise<'go' | 'stop' | 'lost'> {
    const { group } = this.opts;
    for (;;) {
      if (this.opts.stopping()) return 'stop';
      if (!group.stillHeld(held, heldSince)) return 'lost';
      const now = this.opts.clock();
      if (!group.handingOver && !group.membershipUnconfirmed(now) && !this.opts.commits.commitsStalled(now)) return 'go';
      await sleep(RANGE_WAIT_POLL_MS);
    }
  }

  /**
   * Shutdown stopped a range's run after `runs.length` of its tasks: once those are over, the range
   * from the first task that did not reach an outcome is written back to the tier it came from, due
   * as it was (true: the original is finished). If that write fails the original stays unfinished,
   * and its next owner runs the whole range again.
   */
  private async cutShort(range: DeferredRange, tierTopic: string, tasks: Array<{ offset: string }>, runs: Array<Promise<boolean>>): Promise<boolean> {
    const outcomes = await Promise.all(runs);
    const first = outcomes.indexOf(false);
    const rest = first === -1 ? outcomes.length : first;
    if (rest === tasks.length) return true;
    await this.opts.runner.deferRangeRest(tierTopic, restOfRange(range, Number(tasks[rest]!.offset), tasks.length - rest));
    return true;
  }
}
