import type { Logger } from '../logger.js';
import type { ConsumerClient } from './consumer-client.js';
import type { PartitionOffsets } from './offset-tracker.js';

/**
 * Offset commits failing this long (the group's coordinator lost with its broker), or one commit
 * unanswered this long (kafkajs retries a commit for up to ~50 s while a new coordinator loads):
 * no new task is sent until one succeeds, each partition looking again this often. Whatever is
 * delivered and not committed is sent again when the partitions move or the consumer restarts,
 * which is how kafkajs recovers from a lost coordinator: 15 % of events were sent twice in the
 * cluster suite's broker kill.
 */
export const COMMIT_STALL_MS = 2000;
export const COMMIT_STALL_RECHECK_MS = 500;
/** At most one "offset commit failed" line per this long (a failing commit is retried every commit interval). */
export const COMMIT_FAILURE_LOG_MS = 5000;

export interface CommitSchedulerOptions {
  consumer: Pick<ConsumerClient, 'commit'>;
  /** What may be committed: only below the oldest unfinished task of each partition. */
  offsets: PartitionOffsets;
  /** The least time between two offset commits. */
  commitIntervalMs: number;
  logger: Logger;
  clock: () => number;
  /** Shutdown began: no commit is scheduled any more (stop() makes the final one). */
  stopping: () => boolean;
}

/**
 * When a runner of acknowledged records (consumer-runner.ts) commits: as soon as an acknowledgement
 * moves a partition's committable offset, at most one commit in flight and at most one per
 * interval; a failed commit is asked for again. Also whether commits have stalled, which a
 * service may take as a reason to start nothing new (delivery does).
 */
export class CommitScheduler {
  private commitTimer: NodeJS.Timeout | undefined;
  private committing: Promise<void> | undefined;
  private commitWanted = false;
  private lastCommitAt = 0;
  /** Since when offset commits fail (undefined: the last one succeeded), and when that was last logged. */
  private commitFailingSince: number | undefined;
  /** When the commit in flight (this.committing) was sent. */
  private commitSentAt = 0;
  private commitFailureLoggedAt = 0;
  private commitFailures = 0;

  constructor(private readonly opts: CommitSchedulerOptions) {}

  /** The commit in flight, if any (it never rejects: a failure is logged and asked for again). */
  get inFlight(): Promise<void> | undefined {
    return this.committing;
  }

  /** Asks for a commit: at once if none ran within the interval, else when the interval ends. */
  requestCommit(): void {
    this.commitWanted = true;
    if (this.committing || this.commitTimer || this.opts.stopping()) return;
    const wait = this.lastCommitAt + this.opts.commitIntervalMs - this.opts.clock();
    if (wait > 0) {
      this.commitTimer = setTimeout(() => { this.commitTimer = undefined; this.startCommit(); }, wait);
      return;
    }
    this.startCommit();
  }

  /** A commit asked for and waiting for its interval is not made (the caller commits itself). */
  cancelScheduled(): void {
    clearTimeout(this.commitTimer);
    this.commitTimer = undefined;
  }

  /** A new generation of the group: its commits have not failed yet. */
  newGeneration(): void {
    this.commitFailingSince = undefined;
  }

  /** Commits have failed, or the one in flight has gone unanswered, for COMMIT_STALL_MS. */
  commitsStalled(now: number): boolean {
    if (this.commitFailingSince !== undefined && now - this.commitFailingSince >= COMMIT_STALL_MS) return true;
    return this.committing !== undefined && now - this.commitSentAt >= COMMIT_STALL_MS;
  }

  /** Commits what is committable now; rejects as the consumer's commit does. */
  async commit(): Promise<void> {
    const list = this.opts.offsets.committableOffsets();
    if (list.length === 0) return;
    await this.opts.consumer.commit(list);
    this.opts.offsets.markCommitted(list);
  }

  private startCommit(): void {
    if (this.opts.stopping()) return;
    this.commitWanted = false;
    this.lastCommitAt = this.opts.clock();
    this.commitSentAt = this.lastCommitAt;
    this.committing = this.commit()
      .then(() => { this.commitFailingSince = undefined; this.commitFailures = 0; })
      .catch((err: unknown) => {
        this.commitWanted = true;
        const now = this.opts.clock();
        this.commitFailingSince ??= now;
        this.commitFailures++;
        if (now - this.commitFailureLoggedAt >= COMMIT_FAILURE_LOG_MS) {
          this.commitFailureLoggedAt = now;
          this.opts.logger.warn({ err, failures: this.commitFailures, failingForMs: now - this.commitFailingSince }, 'offset commit failed');
        }
      })
      .finally(() => { this.committing = undefined; if (this.commitWanted) this.requestCommit(); });
  }
}
