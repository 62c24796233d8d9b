import type { Logger } from '@switchyard/platform/logger';
import type { DeliveryTask } from '@switchyard/platform/schemas/generated';
import type { GroupAssignment } from './assignment.js';
import type { CommitScheduler } from '@switchyard/platform/consuming/commit-scheduler';
import type { OffsetTracker } from '@switchyard/platform/consuming/offset-tracker';
import type { PauseControl } from './pause-control.js';
import type { RangeReplay } from './range-replay.js';
import type { StallDetector } from './stall-detector.js';
import type { TaskRunner } from './task-runner.js';
import type { TaskSlots } from './task-slots.js';

export interface TaskDispatchOptions {
  runner: TaskRunner;
  slots: TaskSlots;
  stalls: StallDetector;
  pauses: PauseControl;
  commits: CommitScheduler;
  group: GroupAssignment;
  /** Waits for a rate limit's reserved token (RangeReplay.awaitReserved). */
  awaitReserved: RangeReplay['awaitReserved'];
  logger: Logger;
  clock: () => number;
}

/**
 * Runs admitted tasks: in their destination's request slots (now, or once a rate limit's token
 * comes), and marks each finished in its partition's offsets once it reached an outcome. Used for
 * the consumer's tasks and for the tasks of ranges read back (range-replay.ts).
 */
export class TaskDispatch {
  constructor(private readonly opts: TaskDispatchOptions) {}

  /**
   * Runs a task in its destination's request slots; once it reached an outcome its offset may be
   * committed. Only shutdown makes the runner give up: the offset stays uncommitted and the task is
   * read again.
   */
  async dispatch(task: DeliveryTask, tracker: OffsetTracker, offset: string, held: string): Promise<void> {
    if (await this.runInSlots(task, held)) { tracker.complete(offset); this.opts.commits.requestCommit(); }
  }

  /**
   * Dispatches a task once its rate limit's token comes (`at`), taking a global slot only then: a
   * waiting task holds none, so healthy destinations' tasks never wait behind it. If its partition
   * moved meanwhile it is dropped unsent (the next owner reads it again); if this instance lost its
   * share, it is held in the first tier.
   */
  async dispatchAt(at: number, task: DeliveryTask, tracker: OffsetTracker, offset: string, held: string): Promise<void> {
    const heldSince = this.opts.group.heldSinceOf(held);
    const token = await this.opts.awaitReserved(at, task.destinationId, held, heldSince);
    if (token === 'hold') {
      try {
        await this.opts.runner.hold(task);
        tracker.complete(offset);
        this.opts.commits.requestCommit();
      } catch (err) {
        this.opts.logger.warn({ err, taskId: task.taskId }, 'task left unfinished');
      } finally {
        this.opts.slots.taskEnded();
      }
      return;
    }
    if (token !== 'go' || !(await this.opts.slots.acquireUnlessStopping())) { this.opts.slots.taskEnded(); return; }
    if (!this.opts.group.stillHeld(held, heldSince)) { this.opts.slots.finished(); return; }
    await this.dispatch(task, tracker, offset, held);
  }

  /**
   * Runs a task holding a global slot (taken by the caller, released here); true once it reached an
   * outcome. `held` is the partition whose offset finishes the task (the tier's, for a range's task).
   */
  async runInSlots(task: DeliveryTask, held: string): Promise<boolean> {
    const key = task.destinationId;
    const { perDestination } = this.opts.slots;
    const heldSince = this.opts.group.heldSinceOf(held);
    if (!perDestination.tryAcquire(key)) await perDestination.acquire(key);
    const mark = this.opts.stalls.started(key, this.opts.clock());
    let finished = false;
    try {
      finished = await this.opts.runner.run(task, () => this.opts.group.mayFollowUp(held, heldSince)) !== false;
    } catch (err) {
      this.opts.logger.warn({ err, taskId: task.taskId }, 'task left unfinished');
    } finally {
      this.opts.stalls.finished(key, mark, this.opts.clock());
      perDestination.release(key);
      this.opts.pauses.resumeDrained(key);
      this.opts.slots.finished();
    }
    return finished;
  }
}
