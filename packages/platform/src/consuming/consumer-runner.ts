import type { Logger } from '../logger.js';
import { CommitScheduler } from './commit-scheduler.js';
import type { BatchHandle, ConsumerClient, RecordBatch, TopicPartition, TopicPartitionOffset, TopicPartitions } from './consumer-client.js';
import { PartitionOffsets, type OffsetTracker } from './offset-tracker.js';

/**
 * Who commits a group's offsets:
 * - `none`: nobody. A reader in a group of its own that reads again from `from` at every start
 *   (an in-memory index, a live tail, a restore).
 * - `transactional`: the handler, inside the producer transaction that writes what it made of the
 *   batch (consume → produce → commit, exactly once).
 * - `acknowledged`: the runner. The handler takes records (`take`) and acknowledges each when it
 *   is finished, in any order; each partition is committed up to just before its oldest
 *   unacknowledged record, so a crash reads again at most what was unfinished or finished since
 *   the last commit (at-least-once).
 */
export type CommitMode = 'none' | 'transactional' | 'acknowledged';

/** The partitions this member holds after a rebalance. */
export interface Assignment {
  memberId: string;
  /** Partitions by topic. */
  byTopic: Readonly<Record<string, number[]>>;
  /** Every partition held, as `topic:partition`. */
  keys: ReadonlySet<string>;
}

export interface ConsumerRunnerOptions {
  client: ConsumerClient;
  topics: readonly string[];
  /** Where a partition with no committed offset (every partition, for `none`) starts. */
  from: 'earliest' | 'latest';
  commits: CommitMode;
  logger: Logger;
  clock?: () => number;
  /** `acknowledged`: the least time between two commits (default 1 s). */
  commitIntervalMs?: number;
  /** Batches of different partitions handled at once (default 1). */
  partitionsAtOnce?: number;
  /**
   * Called after every rebalance with the partitions now held, before any batch of them. For
   * `acknowledged`, tracking of partitions no longer held has already been dropped.
   */
  onAssigned?: (assignment: Assignment) => void;
  /**
   * Called when the group starts a rebalance, before this member rejoins. For `acknowledged`, the
   * runner then commits what was acknowledged, while the old generation's commits are accepted.
   */
  onRevoking?: () => Promise<void>;
  /** What a handler that does not resolve offsets itself leaves: the whole batch (default) or what it took. */
  resolveWholeBatch?: boolean;
}

/** Finishes a taken record: its offset may be committed once every record before it is finished too. */
export type Ack = () => void;

/** A batch handed to the handler, with what the runner offers while it is held. */
export interface BatchContext extends BatchHandle {
  /**
   * `acknowledged`: the record at `offset` is the handler's; it is committed once acknowledged and
   * every earlier taken record of the partition is too. Offsets must be taken in increasing order.
   */
  take(offset: string): Ack;
}

export type RunnerBatchHandler = (batch: RecordBatch, context: BatchContext) => Promise<void>;

/** Bounds on a graceful stop (`acknowledged`): finishing what is in flight, then the final commit. */
export interface StopBounds {
  drainMs?: number;
  commitMs?: number;
  /** Resolves once the service has nothing unfinished of its own (besides taken records). */
  idle?: () => Promise<void>;
}

/**
 * Runs one consumer group member for a service: subscribes, hands batches to the handler, and
 * owns commits (CommitMode), pause and resume, read-again-later, the assigned and revoking
 * callbacks, and a graceful stop. Which Kafka client is below is the ConsumerClient's business.
 */
export class ConsumerRunner {
  /** `acknowledged`: what has been taken and acknowledged, per partition. */
  readonly offsets = new PartitionOffsets();
  /** `acknowledged`: when offsets are committed, and whether commits have stalled. */
  readonly commits: CommitScheduler;
  private stopping = false;
  private running = 0;
  private readonly drained = new Set<() => void>();
  private readonly retryTimers = new Map<string, NodeJS.Timeout>();
  private readonly clock: () => number;
  private readonly unhooks: Array<() => void> = [];

  constructor(private readonly opts: ConsumerRunnerOptions) {
    this.clock = opts.clock ?? Date.now;
    this.commits = new CommitScheduler({
      consumer: opts.client, offsets: this.offsets, commitIntervalMs: opts.commitIntervalMs ?? 1000, logger: opts.logger, clock: this.clock, stopping: () => this.stopping,
    });
  }

  get client(): ConsumerClient {
    return this.opts.client;
  }

  /** Whether stop() has begun. */
  get stopped(): boolean {
    return this.stopping;
  }

  /** Connects, subscribes and starts handing batches over; resolves once running. */
  async start(handler: RunnerBatchHandler): Promise<void> {
    const { client, commits } = this.opts;
    await client.connect();
    await client.subscribe(this.opts.topics, this.opts.from);
    this.unhooks.push(client.on('assigned', (memberId, byTopic) => this.assigned(memberId, byTopic)));
    if (this.opts.onRevoking || commits === 'acknowledged') this.unhooks.push(client.beforeRejoining(() => this.revoking()));
    const resolveWholeBatch = this.opts.resolveWholeBatch ?? commits !== 'acknowledged';
    await client.run({
      partitionsAtOnce: this.opts.partitionsAtOnce ?? 1,
      resolveWholeBatch,
      eachBatch: async (batch, handle) => {
        if (this.stopping) return;
        this.running++;
        try {
          await handler(batch, this.context(batch, handle));
        } finally {
          if (--this.running === 0) for (const wake of [...this.drained]) wake();
        }
      },
    });
  }

  /** The partition is not fetched until resume(). */
  pause(partitions: readonly TopicPartitions[]): void { this.opts.client.pause(partitions); }
  resume(partitions: readonly TopicPartitions[]): void { this.opts.client.resume(partitions); }
  paused(): Array<{ topic: string; partitions: number[] }> { return this.opts.client.paused(); }
  seek(position: TopicPartitionOffset): void { this.opts.client.seek(position); }

  /**
   * Reads a partition again from `offset`, `ms` from now: it is paused meanwhile, the others go on
   * (a schema registry that did not answer, say). A later call for the same partition replaces it.
   */
  readAgainLater(position: TopicPartitionOffset, ms: number): void {
    const { topic, partition } = position;
    const key = `${topic}:${partition}`;
    this.pause([{ topic, partitions: [partition] }]);
    this.seek(position);
    clearTimeout(this.retryTimers.get(key));
    const timer = setTimeout(() => {
      this.retryTimers.delete(key);
      if (!this.stopping) this.resume([{ topic, partitions: [partition] }]);
    }, ms);
    timer.unref();
    this.retryTimers.set(key, timer);
  }

  /** `acknowledged`: the tracker of a partition (offsets taken and acknowledged). */
  tracker(partition: TopicPartition): OffsetTracker {
    return this.offsets.tracker(partition.topic, partition.partition);
  }

  /** `acknowledged`: takes the record at `offset` of a partition; see BatchContext.take. */
  take(partition: TopicPartition, offset: string): Ack {
    const tracker = this.tracker(partition);
    tracker.track(offset);
    return () => this.acknowledge(tracker, offset);
  }

  /** `acknowledged`: the record at `offset` of this tracker's partition is finished. */
  acknowledge(tracker: OffsetTracker, offset: string): void {
    if (tracker.complete(offset)) this.commits.requestCommit();
  }

  /** Records taken and not yet acknowledged, over every partition held. */
  get unacknowledged(): number {
    return this.offsets.inFlight();
  }

  /** Resolves once no batch is being handled. */
  private batchesDone(): Promise<void> {
    if (this.running === 0) return Promise.resolve();
    return new Promise((resolve) => {
      const wake = () => { this.drained.delete(wake); resolve(); };
      this.drained.add(wake);
    });
  }

  /**
   * Stops: nothing more is fetched or handed over. For `acknowledged`, the member stays in the
   * group while the handler's batch and taken records finish (bounded), commits what was
   * acknowledged, and only then leaves: commits need membership, and whatever finished but was not
   * committed would be handled again by the next owner. Then the client disconnects.
   */
  async stop(bounds: StopBounds = {}): Promise<void> {
    const { client } = this.opts;
    if (this.stopping) return;
    this.stopping = true;
    for (const timer of this.retryTimers.values()) clearTimeout(timer);
    this.retryTimers.clear();
    if (this.opts.commits === 'acknowledged') {
      client.pause(this.opts.topics.map((topic) => ({ topic })));
      await this.finishAndCommit(bounds.drainMs ?? 15_000, bounds.commitMs ?? 5_000, bounds.idle, 'final offset commit');
      await client.stop();
    }
    for (const unhook of this.unhooks.splice(0)) unhook();
    await client.disconnect();
  }

  /**
   * Lets what is running finish, within `drainMs`, then commits what was acknowledged, within
   * `commitMs`: a commit can go unanswered for long (a client retrying while a coordinator moves),
   * and what is left uncommitted is handled again by the next owner.
   */
  private async finishAndCommit(drainMs: number, commitMs: number, idle: (() => Promise<void>) | undefined, what: string): Promise<void> {
    let drainTimer: NodeJS.Timeout | undefined;
    const deadline = new Promise<void>((resolve) => { drainTimer = setTimeout(resolve, drainMs); });
    await Promise.race([this.batchesDone(), deadline]);
    if (idle) await Promise.race([idle(), deadline]);
    clearTimeout(drainTimer);
    this.commits.cancelScheduled();
    let commitTimer: NodeJS.Timeout | undefined;
    const final = (async () => { await this.commits.inFlight; await this.commits.commit(); })()
      .catch((err: unknown) => this.opts.logger.warn({ err }, `${what} failed`));
    const unanswered = new Promise<void>((resolve) => {
      commitTimer = setTimeout(() => { this.opts.logger.warn({ waitedMs: commitMs }, `${what} unanswered: going on without it`); resolve(); }, commitMs);
    });
    await Promise.race([final, unanswered]);
    clearTimeout(commitTimer);
  }

  private context(batch: RecordBatch, handle: BatchHandle): BatchContext {
    return {
      current: handle.current,
      heartbeat: handle.heartbeat,
      resolveOffset: handle.resolveOffset,
      take: (offset) => this.take(batch, offset),
    };
  }

  private assigned(memberId: string, byTopic: Readonly<Record<string, number[]>>): void {
    const keys = new Set<string>();
    for (const [topic, partitions] of Object.entries(byTopic)) for (const p of partitions) keys.add(`${topic}:${p}`);
    for (const [key, timer] of this.retryTimers) if (!keys.has(key)) { clearTimeout(timer); this.retryTimers.delete(key); }
    if (this.opts.commits === 'acknowledged') {
      this.offsets.retainOnly(keys);
      this.commits.newGeneration();
    }
    this.opts.onAssigned?.({ memberId, byTopic, keys });
  }

  private async revoking(): Promise<void> {
    if (this.stopping) return;
    await this.opts.onRevoking?.();
    if (this.opts.commits !== 'acknowledged') return;
    this.commits.cancelScheduled();
    await this.commits.inFlight;
    await this.commits.commit().catch((err: unknown) => this.opts.logger.info({ err }, 'offset commit before rejoining the group refused'));
  }
}
