import { setTimeout as sleep } from 'node:timers/promises';
import type { AvroCodec, Decoded } from '@switchyard/platform/codec/avro-codec';
import { RegistryUnavailableError } from '@switchyard/platform/errors';
import type { Consumer, EachBatchPayload } from '@switchyard/platform/kafka/client';
import type { Logger } from '@switchyard/platform/logger';
import type { FetchedRecord } from '@switchyard/platform/kafka/groupless-reader';
import type { DeferredRange, DeliveryTask } from '@switchyard/platform/schemas/generated';
import { eventRecordOf, freshTask } from '@switchyard/platform/tasks/delivery-task';
import { webhookBodyText } from '@switchyard/platform/tasks/webhook-body';
import { BatchRanges, mayJoinRange, restOfRange, resumedFromRange, type DeferReason, type PendingRange } from './deferred-ranges.js';
import type { DeliveryMetrics } from './delivery-metrics.js';
import { ConcurrencyLimiter, KeyedLimiter } from './in-flight-limits.js';
import { PartitionOffsets, type OffsetTracker } from './offset-tracker.js';
import { StallDetector } from './stall-detector.js';
import type { TaskRunner } from './task-runner.js';

/** How often, at most, the fetch loop hands kafkajs a chance to heartbeat (it sends one per heartbeatInterval). */
const HEARTBEAT_CHECK_MS = 100;
/**
 * After this long without a successful heartbeat (the process was frozen or starved), membership is
 * confirmed before the next task is sent: past the 10 s session timeout the group has given the
 * partition to another member, which sends it too. kafkajs heartbeats every second while the
 * consumer runs, so this costs nothing otherwise.
 */
const MEMBERSHIP_CHECK_MS = 3000;
/**
 * Offset commits failing this long (the group's coordinator lost with its broker), or one commit
 * unanswered this long (kafkajs retries a commit for up to ~50 s while a new coordinator loads):
 * no new task is sent until one succeeds, each partition looking again this often. Whatever is
 * delivered and not committed is sent again when the partitions move or the consumer restarts,
 * which is how kafkajs recovers from a lost coordinator: 15 % of events were sent twice in the
 * cluster suite's broker kill.
 */
const COMMIT_STALL_MS = 2000;
const COMMIT_STALL_RECHECK_MS = 500;
/**
 * When the group starts a rebalance, how long in-flight tasks may take to finish before what is
 * finished is committed and the member rejoins (the other members wait for it meanwhile).
 */
const HAND_OVER_MS = 1000;
/** The blockedBy key of partitions waiting for deferral slots (no destination id is empty). */
const DEFERRALS = '';
/**
 * While a range's destination is full (and not stalled), or the group rebalances, or membership is
 * unconfirmed, a range's run waits this long before looking again.
 */
const RANGE_WAIT_POLL_MS = 20;
/** At most one "offset commit failed" line per this long (a failing commit is retried every commit interval). */
const COMMIT_FAILURE_LOG_MS = 5000;
/**
 * A record whose writer schema the registry did not answer for (restarting, say) is read again
 * this much later: its partition waits, the others go on. A range being read waits in place.
 */
const REGISTRY_RETRY_MS = 1000;

export interface DeliveryConsumerOptions {
  consumer: Consumer;
  codec: AvroCodec;
  runner: TaskRunner;
  /** The delivery topic and every retry-tier topic (or one of the two, `DELIVERY_READS`). */
  topics: string[];
  /** The delivery topic, whether read here or not: deferred ranges refer to it. */
  deliveryTopic: string;
  /**
   * Committed records of a partition, `from` to `to` inclusive (kafka/partition-range.ts): of the
   * delivery topic (ranges delivery deferred) or the ingest topic (ranges fan-out held).
   */
  readRange: (topic: string, partition: number, from: bigint, to: bigint) => Promise<FetchedRecord[]>;
  metrics: DeliveryMetrics;
  logger: Logger;
  clock: () => number;
  /** Tasks admitted and unfinished, over all destinations: the consumer waits beyond this. */
  maxInFlight: number;
  /** Requests in flight to one destination. */
  maxInFlightPerDestination: number;
  /** Tasks of one destination waiting for its slots; beyond this the partition pauses until they drain. */
  maxWaitingPerDestination: number;
  /**
   * The least time between two offset commits. A commit starts as soon as a finished task moves a
   * partition's committable offset (at most one in flight, at most one per interval): what a crash
   * re-delivers is what finished in the last interval plus what was in flight.
   */
  commitIntervalMs: number;
  /** Writes an unreadable record to invalid-events (acks=all). */
  setAside: (value: Buffer | null, topic: string, partition: number, offset: string, reason: string) => Promise<void>;
  /**
   * The group's committed offsets of some topics, keyed `topic:partition`. A partition this instance
   * read before a rebalance is read again from its own oldest unfinished record; if the instance was
   * expelled meanwhile (a pause past its session timeout), another member owned the partition and
   * may have committed past that point, and what lies below the group's offset is done.
   */
  groupOffsets?: (topics: string[]) => Promise<Map<string, bigint>>;
}

/**
 * Reads delivery tasks (the delivery topic and the retry tiers, one consumer group) and runs many
 * of them at once, independently of partitions: each record is handed to the task runner and the
 * consumer moves on, waiting only when the global in-flight cap is reached. A tier record that is
 * not due yet pauses its partition and is read again when due (a timer resumes it): no handler
 * sleeps, no other partition waits. Offsets are committed as tasks finish (at most once per
 * interval), and only up to the oldest unfinished task of each partition, so a crash re-runs at most
 * what was in flight or finished since the last commit (at-least-once). stop() stops fetching but
 * stays in the group while in-flight tasks finish, commits, and only then leaves: a graceful
 * shutdown re-delivers nothing.
 */
export class DeliveryConsumer {
  private readonly offsets = new PartitionOffsets();
  private readonly global: ConcurrencyLimiter;
  /**
   * Tasks on their way to the retry tier without a request (their destination refuses or stalled)
   * have slots of their own, as many as the global ones: a hung destination's tier records falling
   * due together (thousands, after a burst) took every global slot while their retry records were
   * written, and the healthy destinations' tasks waited behind them. Past this the partition is
   * sought back and waits until half have finished.
   */
  private readonly deferrals: ConcurrencyLimiter;
  private readonly perDestination: KeyedLimiter;
  private readonly resumeTimers = new Map<string, NodeJS.Timeout>();
  private readonly lagByPartition = new Map<string, number>();
  /** Which destinations have stopped answering (a full one of those has its overflow deferred). */
  private readonly stalls = new StallDetector();
  /** Partitions paused because this destination's queue is full, resumed as it drains. */
  private readonly blockedBy = new Map<string, Map<string, { topic: string; partition: number }>>();
  private commitTimer: NodeJS.Timeout | undefined;
  private committing: Promise<void> | undefined;
  private commitWanted = false;
  private lastCommitAt = 0;
  private stopping = false;
  /** The eachBatch call running now, if any: stop() waits for it to return. */
  private batchRunning: Promise<void> | undefined;
  /** Tasks admitted and unfinished (each holds a global slot), and who waits for them to reach 0. */
  private active = 0;
  private readonly idle: Array<() => void> = [];
  private lastHeartbeatCheck = 0;
  /** Since when offset commits fail (undefined: the last one succeeded), and when that was last logged. */
  private commitFailingSince: number | undefined;
  /** When the commit in flight (this.committing) was sent. */
  private commitSentAt = 0;
  private commitFailureLoggedAt = 0;
  private registryLoggedAt = 0;
  private commitFailures = 0;
  /** When a heartbeat last succeeded (kafkajs's HEARTBEAT event) or the group was last joined. */
  private lastHeartbeatOk = 0;
  /** This instance's member id in its group at the last assignment. */
  private memberId: string | undefined;
  /** Assignments so far: a batch fetched under an earlier one is left unsent (handleBatch). */
  private assignments = 0;
  /** The group is rebalancing (handOver ran): nothing new is sent until the next assignment. */
  private handingOver = false;
  /**
   * Every partition of the last assignment until its first batch: the group's committed offset (read
   * once per assignment), and whether this instance sought it to a position of its own.
   */
  private readonly groupFloors = new Map<string, { offset: Promise<bigint | undefined>; ownPosition: boolean }>();
  /**
   * Since which assignment (its number) this member has held each partition without a break: a
   * range's run goes on only while the tier partition holding the range record stays this member's.
   */
  private readonly heldSince = new Map<string, number>();

  constructor(private readonly opts: DeliveryConsumerOptions) {
    this.global = new ConcurrencyLimiter(opts.maxInFlight);
    this.deferrals = new ConcurrencyLimiter(opts.maxInFlight);
    this.perDestination = new KeyedLimiter(opts.maxInFlightPerDestination);
    opts.metrics.countInFlight(() => this.global.active);
  }

  async start(): Promise<void> {
    const { consumer } = this.opts;
    for (const topic of this.opts.topics) await consumer.subscribe({ topic, fromBeginning: true });
    consumer.on(consumer.events.GROUP_JOIN, ({ payload }) => this.onAssignment(payload.memberId, payload.memberAssignment));
    // A heartbeat confirms membership as of when it was sent, not when its answer was read: the
    // answer to one sent just before a freeze (SIGSTOP, a starved process) is read as the process
    // resumes, though the group has expelled the member meanwhile; dated by its reading, it let a
    // resumed instance send tasks of partitions given away for another second.
    let heartbeatSentAt: number | undefined;
    consumer.on(consumer.events.REQUEST, ({ payload }) => { if (payload.apiName === 'Heartbeat') heartbeatSentAt = payload.sentAt; });
    consumer.on(consumer.events.HEARTBEAT, () => { this.lastHeartbeatOk = heartbeatSentAt ?? this.opts.clock(); });
    await consumer.run({
      autoCommit: false,
      eachBatchAutoResolve: false,
      eachBatch: async (payload) => {
        if (this.stopping) return;
        const running = this.handleBatch(payload);
        this.batchRunning = running;
        try { await running; } finally { if (this.batchRunning === running) this.batchRunning = undefined; }
      },
    });
  }

  private async handleBatch({ batch, resolveOffset, heartbeat, isRunning, isStale }: EachBatchPayload): Promise<void> {
    const { topic, partition } = batch;
    const tracker = this.offsets.tracker(topic, partition);
    // kafkajs hands over a batch fetched before a rebalance even when the handler gets to it (or
    // resumes from a wait) after it: the partition may be another member's by then, which reads
    // it from the group's offset and sends the same records, at the same moment (both copies
    // reached the cluster suite's receiver within a millisecond). Such a batch is dropped unsent and
    // unresolved: the new assignment's positions decide what is read next.
    const assignment = this.assignments;
    const gone = () => !isRunning() || isStale() || this.assignments !== assignment || this.handingOver;
    // kafkajs fetches a partition again from just past its last resolved offset. It is resolved
    // once, as the batch is left (whichever way), rather than per record: the same position, since
    // no fetch of this partition runs while its batch is handled, and a seek (destination full,
    // tier record not due, rebalance) overrides it anyway. Per record it cost two int64 parses.
    let resolved: string | undefined;
    // Deferred tasks of this batch, by destination (only the delivery topic's: they stay there).
    const ranges = topic === this.opts.deliveryTopic ? new BatchRanges(topic, partition) : undefined;
    try {
      const messages = await this.aboveGroupFloor(batch);
      if (gone()) return;
      for (const message of messages) {
        if (gone() || this.stopping) return;
        // A task, or (in a tier) a range of deferred tasks left in the delivery topic.
        let record: { task: DeliveryTask; range?: undefined } | { task?: undefined; range: DeferredRange };
        let fetchedSchema = false;
        try {
          // Synchronous once the schema is known: no promise and no microtask turn per record.
          let decoded = this.opts.codec.decodeKnown(message.value);
          if (!decoded) { fetchedSchema = true; decoded = await this.opts.codec.decode(message.value); }
          if (decoded.name === 'io.switchyard.pipeline.DeliveryTask') record = { task: decoded.value };
          else if (decoded.name === 'io.switchyard.pipeline.DeferredRange' && topic !== this.opts.deliveryTopic) record = { range: decoded.value };
          else throw new Error(`${decoded.name} is not a delivery task`);
        } catch (err) {
          if (err instanceof RegistryUnavailableError) {
            this.registryUnavailable(err);
            this.waitUntilDue(topic, partition, message.offset, REGISTRY_RETRY_MS);
            return;
          }
          await this.opts.setAside(message.value, topic, partition, message.offset, (err as Error).message);
          if (gone()) return;
          tracker.track(message.offset);
          tracker.complete(message.offset);
          resolved = message.offset;
          this.requestCommit();
          continue;
        }
        if (fetchedSchema && gone()) return;
        const now = this.opts.clock();
        if (now - this.lastHeartbeatOk >= MEMBERSHIP_CHECK_MS) {
          // Throws (and the batch ends) if this member was expelled meanwhile; returns without a
          // request while kafkajs is already rejoining (it has no member id then): either way no
          // heartbeat succeeds, and the record waits until one does.
          await heartbeat();
          if (gone() || this.stopping) return;
          if (this.opts.clock() - this.lastHeartbeatOk >= MEMBERSHIP_CHECK_MS) {
            this.waitUntilDue(topic, partition, message.offset, COMMIT_STALL_RECHECK_MS);
            return;
          }
        }
        const notBefore = record.task ? record.task.notBefore : record.range.notBefore;
        if (notBefore !== null && notBefore > now) {
          this.waitUntilDue(topic, partition, message.offset, notBefore - now);
          return;
        }
        if (this.commitsStalled(now)) {
          this.waitUntilDue(topic, partition, message.offset, COMMIT_STALL_RECHECK_MS);
          return;
        }
        // Work that takes a deferral slot instead of a request slot: a range that fell due (read
        // back from the delivery topic, or deferred again), or a task for the retry tier.
        let deferral: (() => Promise<void>) | undefined;
        const { task, range } = record;
        if (range) {
          deferral = () => this.releaseRange(range, topic, partition, tracker, message.offset);
        } else {
          // A destination that is not answering (every circuit open, or full and stalled): the task
          // waits in the retry tier without taking one of its request slots, and the partition keeps
          // flowing for every other destination.
          let deferReason: DeferReason | undefined = this.opts.runner.circuitOpen(task) ? 'circuit_open' : undefined;
          if (!deferReason && this.destinationFull(task.destinationId)) {
            if (!this.stalls.confirmedStalled(task.destinationId)) {
              this.waitForDestination(task.destinationId, topic, partition, message.offset);
              return;
            }
            deferReason = 'overloaded';
          }
          if (deferReason && ranges && mayJoinRange(task)) {
            // Fresh tasks stay in the delivery topic: one tier record for the batch's run of them.
            if (this.stopping) return;
            tracker.track(message.offset);
            resolved = message.offset;
            const closed = ranges.add(task, message.offset, deferReason);
            if (closed) this.writeRange(closed, tracker);
            continue;
          }
          if (ranges?.size) {
            const ended = ranges.end(task.destinationId);
            if (ended) this.writeRange(ended, tracker);
          }
          if (deferReason) deferral = () => this.deferTask(task, deferReason, tracker, message.offset);
        }
        if (deferral) {
          if (this.stopping) return;
          if (!this.deferrals.tryAcquire()) {
            this.waitForDeferrals(topic, partition, message.offset);
            return;
          }
          tracker.track(message.offset);
          resolved = message.offset;
          this.active++;
          void deferral();
          continue;
        }
        if (!task) continue; // unreachable: a range always takes a deferral slot
        // A free global slot is taken at once (the common case); otherwise wait for one.
        const waited = this.stopping || !this.global.tryAcquire();
        if (waited && !(await this.acquireUnlessStopping())) return;
        if (waited && gone()) { this.global.release(); return; }
        tracker.track(message.offset);
        resolved = message.offset;
        this.active++;
        void this.dispatch(task, tracker, message.offset, `${topic}:${partition}`);
        // kafkajs sends a heartbeat at most once per heartbeatInterval however often this is called;
        // calling it after each wait for a slot, and otherwise every HEARTBEAT_CHECK_MS, keeps
        // that (and its rebalance notice) while sparing a promise per record.
        if (waited || now - this.lastHeartbeatCheck >= HEARTBEAT_CHECK_MS) {
          this.lastHeartbeatCheck = this.opts.clock();
          await heartbeat();
        }
      }
      this.lagByPartition.set(`${topic}:${partition}`, Number(batch.offsetLag()));
      this.reportLag(topic);
    } finally {
      // Written however the batch is left: their offsets are tracked, like a deferral under way.
      if (ranges?.size) for (const r of ranges.drain()) this.writeRange(r, tracker);
      // Not into a new assignment: kafkajs's positions then belong to it (and onAssignment set them).
      if (resolved !== undefined && this.assignments === assignment) resolveOffset(resolved);
    }
  }

  /**
   * A partition's first batch after a rebalance starts where this instance left it (its own oldest
   * unfinished record) but never below the group's committed offset: what lies below was finished by
   * another member while this one was out of the group. A partition this instance has no position
   * of its own for starts at the group's offset: kafkajs keeps a seek still pending when a partition
   * is taken away (paused until a tier record is due) and applies it when the partition comes back,
   * possibly much later — it sent again all the other members had delivered meanwhile.
   */
  private async aboveGroupFloor(batch: EachBatchPayload['batch']): Promise<EachBatchPayload['batch']['messages']> {
    const { topic, partition, messages } = batch;
    const key = `${topic}:${partition}`;
    const entry = this.groupFloors.get(key);
    if (!entry || messages.length === 0) return messages;
    const floor = await entry.offset;
    if (this.groupFloors.get(key) === entry) this.groupFloors.delete(key);
    const first = BigInt(messages[0]!.offset);
    if (floor === undefined || first === floor) return messages;
    if (first > floor) {
      if (entry.ownPosition) return messages;
      // Once only (the entry is gone): the offset at the floor may be a transaction marker.
      this.opts.logger.info({ topic, partition, from: messages[0]!.offset, to: String(floor) }, 'a position left from before a rebalance: reading from the group\'s offset');
      this.opts.consumer.seek({ topic, partition, offset: String(floor) });
      return [];
    }
    this.opts.logger.info({ topic, partition, from: messages[0]!.offset, to: String(floor) }, 'skipping records the group finished while this instance was out of it');
    const above = messages.filter((message) => BigInt(message.offset) >= floor);
    if (above.length === 0) this.opts.consumer.seek({ topic, partition, offset: String(floor) });
    return above;
  }

  /** A task sent to the retry tier without a request; a deferral that failed (shutdown) leaves its offset unfinished: the task is read again. */
  private async deferTask(task: DeliveryTask, reason: 'circuit_open' | 'overloaded', tracker: OffsetTracker, offset: string): Promise<void> {
    try {
      await this.opts.runner.defer(task, reason);
      tracker.complete(offset);
      this.requestCommit();
    } catch (err) {
      this.opts.logger.warn({ err, taskId: task.taskId }, 'task left unfinished');
    } finally {
      this.deferrals.release();
      if (this.deferrals.active <= this.deferrals.limit / 2) this.resumeBlocked(DEFERRALS);
      this.taskEnded();
    }
  }

  /** A task's global slot is free again; stop() waits for the last one. */
  private finished(): void {
    this.global.release();
    this.taskEnded();
  }

  private taskEnded(): void {
    this.active--;
    if (this.active === 0) { for (const resolve of this.idle.splice(0)) resolve(); }
  }

  /**
   * Stops fetching (every topic paused) while staying in the group, lets in-flight tasks finish
   * (bounded), commits what finished, and only then leaves the group: commits need membership, and
   * whatever finished but was not committed would be delivered again by the next owner.
   */
  async stop(drainMs = 15_000, commitMs = 5_000): Promise<void> {
    const { consumer } = this.opts;
    this.stopping = true;
    for (const timer of this.resumeTimers.values()) clearTimeout(timer);
    this.resumeTimers.clear();
    consumer.pause(this.opts.topics.map((topic) => ({ topic })));
    const deadline = new Promise((r) => setTimeout(r, drainMs).unref());
    await Promise.race([this.batchRunning, deadline]);
    if (this.active > 0) await Promise.race([this.whenIdle(), deadline]);
    clearTimeout(this.commitTimer);
    this.commitTimer = undefined;
    // Bounded: kafkajs retries a commit for up to ~50 s (a coordinator moving), and the whole stop
    // must fit the shutdown step's 25 s. What is left uncommitted is sent again by the next owner.
    let timer: NodeJS.Timeout | undefined;
    const final = (async () => { await this.committing; await this.commit(); })()
      .catch((err: unknown) => this.opts.logger.warn({ err }, 'final offset commit failed'));
    const unanswered = new Promise<void>((r) => { timer = setTimeout(() => { this.opts.logger.warn({ waitedMs: commitMs }, 'final offset commit unanswered: leaving the group without it'); r(); }, commitMs); });
    await Promise.race([final, unanswered]);
    clearTimeout(timer);
    await consumer.stop();
  }

  /**
   * The group is rebalancing and this member is about to rejoin (kafkajs has no "partitions
   * revoked" callback; kafkajs/heartbeat.ts calls this first): it sends nothing new, lets
   * in-flight tasks finish for a moment, and commits what finished while the old generation's
   * commits are still accepted. A partition that moves to another member is then read from past
   * the tasks this one delivered, instead of from its last commit before the rebalance.
   */
  async handOver(maxWaitMs = HAND_OVER_MS): Promise<void> {
    if (this.stopping) return;
    this.handingOver = true;
    if (this.active > 0) {
      const deadline = new Promise<void>((r) => setTimeout(r, maxWaitMs).unref());
      await Promise.race([this.whenIdle(), deadline]);
    }
    clearTimeout(this.commitTimer);
    this.commitTimer = undefined;
    await this.committing;
    await this.commit().catch((err: unknown) => this.opts.logger.info({ err }, 'offset commit before rejoining the group refused'));
  }

  private whenIdle(): Promise<void> {
    return this.active === 0 ? Promise.resolve() : new Promise((resolve) => { this.idle.push(resolve); });
  }

  /** A global slot, or false (nothing taken) when shutdown began while waiting for it. */
  private async acquireUnlessStopping(): Promise<boolean> {
    await this.global.acquire();
    if (!this.stopping) return true;
    this.global.release();
    return false;
  }

  /** Asks for a commit: at once if none ran within the interval, else when the interval ends. */
  private requestCommit(): void {
    this.commitWanted = true;
    if (this.committing || this.commitTimer || this.stopping) return;
    const wait = this.lastCommitAt + this.opts.commitIntervalMs - this.opts.clock();
    if (wait > 0) {
      this.commitTimer = setTimeout(() => { this.commitTimer = undefined; this.startCommit(); }, wait);
      return;
    }
    this.startCommit();
  }

  private startCommit(): void {
    if (this.stopping) return;
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

  /**
   * Runs a task in its destination's request slots; once it reached an outcome its offset may be
   * committed. Only shutdown makes the runner give up: the offset stays uncommitted and the task is
   * read again.
   */
  private async dispatch(task: DeliveryTask, tracker: OffsetTracker, offset: string, held: string): Promise<void> {
    if (await this.runInSlots(task, held)) { tracker.complete(offset); this.requestCommit(); }
  }

  /**
   * Runs a task holding a global slot (taken by the caller, released here); true once it reached an
   * outcome. `held` is the partition whose offset finishes the task (the tier's, for a range's task).
   */
  private async runInSlots(task: DeliveryTask, held: string): Promise<boolean> {
    const key = task.destinationId;
    const heldSince = this.heldSince.get(held);
    if (!this.perDestination.tryAcquire(key)) await this.perDestination.acquire(key);
    const mark = this.stalls.started(key, this.opts.clock());
    let finished = false;
    try {
      finished = await this.opts.runner.run(task, () => this.mayFollowUp(held, heldSince)) !== false;
    } catch (err) {
      this.opts.logger.warn({ err, taskId: task.taskId }, 'task left unfinished');
    } finally {
      this.stalls.finished(key, mark, this.opts.clock());
      this.perDestination.release(key);
      this.resumeDrained(key);
      this.finished();
    }
    return finished;
  }

  /** Writes a range of deferred tasks (one tier record); its tasks' offsets are finished once it is in Kafka. */
  private writeRange(range: PendingRange, tracker: OffsetTracker): void {
    this.active++;
    this.opts.runner.deferRange(range).then(() => {
      for (const offset of range.offsets) tracker.complete(offset);
      this.requestCommit();
    }, (err: unknown) => {
      this.opts.logger.warn({ err, destinationId: range.destinationId, tasks: range.tasks.length }, 'deferred tasks left unfinished');
    }).finally(() => this.taskEnded());
  }

  /**
   * A range record that fell due (read from `topic`:`partition`, a tier); it is finished once every
   * task in it reached an outcome or was deferred again, or what was left of it when shutdown cut
   * its run short was written back.
   */
  private async releaseRange(range: DeferredRange, topic: string, partition: number, tracker: OffsetTracker, offset: string): Promise<void> {
    let done = false;
    try {
      done = await this.runRange(range, topic, partition);
    } catch (err) {
      this.opts.logger.warn({ err, destinationId: range.destinationId, partition: range.partition, fromOffset: range.fromOffset }, 'deferred range left unfinished');
    } finally {
      this.deferrals.release();
      if (this.deferrals.active <= this.deferrals.limit / 2) this.resumeBlocked(DEFERRALS);
      this.taskEnded();
    }
    if (done) { tracker.complete(offset); this.requestCommit(); }
  }

  /** Why a destination takes no request now (every circuit open, or full and stalled), if it does not. */
  private refusal(destinationId: string): DeferReason | undefined {
    if (this.opts.runner.destinationRefuses(destinationId)) return 'circuit_open';
    if (this.destinationFull(destinationId) && this.stalls.confirmedStalled(destinationId)) return 'overloaded';
    return undefined;
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
    const { runner } = this.opts;
    const held = `${tierTopic}:${tierPartition}`;
    const heldSince = this.heldSince.get(held);
    const refused = this.refusal(range.destinationId);
    if (refused && await runner.deferRangeAgain(range, refused)) return true;
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
    const tasks = await this.tasksOfRange(records, range);
    const runs: Array<Promise<boolean>> = [];
    for (const [i, { offset, task }] of tasks.entries()) {
      // Room in the destination's queue, or a refusal. Past the deadline too: sent at once, each
      // task held a global slot while it queued for the destination's.
      let refusing: DeferReason | undefined;
      while (!this.stopping) {
        refusing = this.refusal(range.destinationId);
        if (refusing || !this.destinationFull(range.destinationId)) break;
        await sleep(RANGE_WAIT_POLL_MS);
      }
      if (refusing && await runner.deferRangeAgain(restOfRange(range, Number(offset), tasks.length - i), refusing)) break;
      if (refusing) {
        // Past the deadline, refused: dead-lettered (reason deadline) without a request or a slot.
        const next = await this.rangeMayGoOn(held, heldSince);
        if (next !== 'go') return next === 'lost' ? false : this.cutShort(range, tierTopic, tasks, runs);
        runs.push(this.deadLetterRefused(resumedFromRange(task, range), refusing));
        continue;
      }
      if (this.stopping || !(await this.acquireUnlessStopping())) return this.cutShort(range, tierTopic, tasks, runs);
      // Looked at with the slot in hand: waiting for one may have outlasted the hold.
      const next = await this.rangeMayGoOn(held, heldSince);
      if (next !== 'go') {
        this.global.release();
        return next === 'lost' ? false : this.cutShort(range, tierTopic, tasks, runs);
      }
      this.active++;
      runs.push(this.runInSlots(resumedFromRange(task, range), held));
    }
    return (await Promise.all(runs)).every(Boolean);
  }

  /** A range's task past its deadline whose destination refuses: defer() finds no time left and dead-letters it. */
  private async deadLetterRefused(task: DeliveryTask, reason: DeferReason): Promise<boolean> {
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
    for (;;) {
      if (this.stopping) return 'stop';
      if (heldSince === undefined || this.heldSince.get(held) !== heldSince) return 'lost';
      const now = this.opts.clock();
      if (!this.handingOver && now - this.lastHeartbeatOk < MEMBERSHIP_CHECK_MS && !this.commitsStalled(now)) return 'go';
      await sleep(RANGE_WAIT_POLL_MS);
    }
  }

  /**
   * Whether a task whose attempt failed may have its retry or dead-letter record written: yes while
   * this member has held `held` without a break since the task was read. An attempt that ended
   * across a freeze past the session timeout (SIGSTOP, a starved process) first waits for a
   * heartbeat to confirm membership, or for the group to show the partition gone: its next owner
   * read the task again from the group's offset and sends it, and a retry record written here too
   * made the receiver get it once more from the tier.
   */
  private async mayFollowUp(held: string, heldSince: number | undefined): Promise<boolean> {
    for (;;) {
      if (heldSince === undefined || this.heldSince.get(held) !== heldSince) return false;
      if (this.stopping || this.opts.clock() - this.lastHeartbeatOk < MEMBERSHIP_CHECK_MS) return true;
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

  /**
   * The range's tasks among the records read: its destination's, never attempted. Records whose key
   * names another destination are not decoded (keys are destinationId:userKey); if that finds fewer
   * tasks than the range counted, every record is decoded, and a shortfall left is logged.
   */
  private async tasksOfRange(records: FetchedRecord[], range: DeferredRange): Promise<Array<{ offset: string; task: DeliveryTask }>> {
    if (range.heldOffsets) return this.heldTasksOfRange(records, range, range.heldOffsets);
    const prefix = `${range.destinationId}:`;
    const collect = async (byKey: boolean) => {
      const tasks: Array<{ offset: string; task: DeliveryTask }> = [];
      for (const record of records) {
        if (byKey && !record.key?.toString('utf8').startsWith(prefix)) continue;
        let decoded: Decoded;
        try {
          decoded = await this.decodeWaitingForRegistry(record.value);
        } catch (err) {
          if (err instanceof RegistryUnavailableError) throw err; // shutdown began: the range stays unfinished
          continue; // set aside on invalid-events when it was first read
        }
        if (decoded.name !== 'io.switchyard.pipeline.DeliveryTask') continue;
        const task = decoded.value;
        if (task.destinationId === range.destinationId && mayJoinRange(task)) tasks.push({ offset: record.offset, task });
      }
      return tasks;
    };
    let tasks = await collect(true);
    if (tasks.length < range.tasks) tasks = await collect(false);
    if (tasks.length < range.tasks) {
      this.opts.logger.error({ ...range, found: tasks.length }, 'a deferred range holds fewer tasks than it counted');
    }
    return tasks;
  }

  /**
   * The tasks of a range fan-out held, built from its ingest records as fan-out would have written
   * them (created when they were held). Each held event was decided and its body built once already,
   * so one that now fails is a fault: set aside on invalid-events with the reason, like an
   * unreadable task.
   */
  private async heldTasksOfRange(records: FetchedRecord[], range: DeferredRange, heldOffsets: number[]): Promise<Array<{ offset: string; task: DeliveryTask }>> {
    const held = new Set(heldOffsets);
    const tasks: Array<{ offset: string; task: DeliveryTask }> = [];
    for (const record of records) {
      if (!held.has(Number(record.offset))) continue;
      let reason: string;
      try {
        const decoded = await this.decodeWaitingForRegistry(record.value);
        const event = eventRecordOf(decoded);
        if (event) {
          tasks.push({ offset: record.offset, task: freshTask(event, range.destinationId, webhookBodyText(event), range.firstAttemptAt) });
          continue;
        }
        reason = `${decoded.name} is not an event type`;
      } catch (err) {
        if (err instanceof RegistryUnavailableError) throw err; // shutdown began: the range stays unfinished
        reason = (err as Error).message;
      }
      this.opts.logger.error({ topic: range.topic, partition: range.partition, offset: record.offset, destinationId: range.destinationId, reason }, 'a held event cannot be made a task');
      await this.opts.setAside(record.value, range.topic, range.partition, record.offset, `held for ${range.destinationId}: ${reason}`);
    }
    if (tasks.length < range.tasks) {
      this.opts.logger.error({ ...range, heldOffsets: undefined, found: tasks.length }, 'a held range holds fewer events than it counted');
    }
    return tasks;
  }

  /**
   * A range's record decoded, waiting out a registry that does not answer: the range holds a
   * deferral slot, not the partition, so it waits in place. Throws RegistryUnavailableError once
   * shutdown began, and CodecError for a record that cannot be read.
   */
  private async decodeWaitingForRegistry(value: Buffer | null): Promise<Decoded> {
    for (;;) {
      try {
        return this.opts.codec.decodeKnown(value) ?? await this.opts.codec.decode(value);
      } catch (err) {
        if (!(err instanceof RegistryUnavailableError) || this.stopping) throw err;
        this.registryUnavailable(err);
        await sleep(REGISTRY_RETRY_MS);
      }
    }
  }

  /** Counts a lookup the registry did not answer; logs at most one line per COMMIT_FAILURE_LOG_MS. */
  private registryUnavailable(err: RegistryUnavailableError): void {
    this.opts.metrics.registryUnavailable.inc();
    const now = this.opts.clock();
    if (now - this.registryLoggedAt < COMMIT_FAILURE_LOG_MS) return;
    this.registryLoggedAt = now;
    this.opts.logger.warn({ err }, 'the schema registry did not answer; the record is read again once it does');
  }

  private destinationFull(destinationId: string): boolean {
    return this.perDestination.active(destinationId) >= this.opts.maxInFlightPerDestination
      && this.perDestination.waiting(destinationId) >= this.opts.maxWaitingPerDestination;
  }

  /**
   * A destination with a full queue holds its partition (not the others): the record is read again
   * once that destination has drained to half its queue. Tasks of a destination that keeps timing
   * out finish at once (the circuit breaker sends them to the retry tier), so this never lasts.
   */
  private waitForDestination(destinationId: string, topic: string, partition: number, offset: string): void {
    const watched = this.blockedBy.has(destinationId);
    const blocked = this.hold(destinationId, topic, partition, offset);
    if (!watched) this.watchForStall(destinationId, blocked);
  }

  /** Every deferral slot is taken: the record is read again once half of them are free. */
  private waitForDeferrals(topic: string, partition: number, offset: string): void {
    this.hold(DEFERRALS, topic, partition, offset);
  }

  /** Pauses a partition at a record until resumeBlocked(key); returns the partitions key holds. */
  private hold(key: string, topic: string, partition: number, offset: string): Map<string, { topic: string; partition: number }> {
    this.opts.consumer.pause([{ topic, partitions: [partition] }]);
    this.opts.consumer.seek({ topic, partition, offset });
    let blocked = this.blockedBy.get(key);
    if (!blocked) this.blockedBy.set(key, (blocked = new Map()));
    blocked.set(`${topic}:${partition}`, { topic, partition });
    return blocked;
  }

  /**
   * If the destination turns out to be hung rather than busy, its partitions are read again (and its
   * overflow deferred) instead of waiting for its requests to time out; looked at again while it
   * holds them.
   */
  private watchForStall(destinationId: string, blocked: Map<string, unknown>): void {
    // setImmediate: decided after the loop's poll phase has read the answers that arrived, since a
    // timer runs first when the loop was blocked (a GC pause, a starved process). Decided at once,
    // a healthy destination's overflow went to the retry tier: 407 tasks of 160 000 in one bench.
    const look = () => setImmediate(() => {
      if (this.stopping || this.blockedBy.get(destinationId) !== blocked) return;
      if (this.stalls.confirm(destinationId, this.opts.clock())) this.resumeBlocked(destinationId);
      else this.watchForStall(destinationId, blocked);
    }).unref();
    setTimeout(look, this.stalls.thresholdMs(destinationId) + 50).unref();
  }

  private resumeDrained(destinationId: string): void {
    if (this.perDestination.waiting(destinationId) > this.opts.maxWaitingPerDestination / 2) return;
    this.resumeBlocked(destinationId);
  }

  private resumeBlocked(destinationId: string): void {
    const blocked = this.blockedBy.get(destinationId);
    if (!blocked || this.stopping) return;
    this.blockedBy.delete(destinationId);
    const resumable = [...blocked.values()].filter(({ topic, partition }) => !this.resumeTimers.has(`${topic}:${partition}`));
    if (resumable.length) this.opts.consumer.resume(resumable.map(({ topic, partition }) => ({ topic, partitions: [partition] })));
  }

  private waitUntilDue(topic: string, partition: number, offset: string, delayMs: number): void {
    const { consumer } = this.opts;
    const key = `${topic}:${partition}`;
    consumer.pause([{ topic, partitions: [partition] }]);
    consumer.seek({ topic, partition, offset });
    clearTimeout(this.resumeTimers.get(key));
    this.resumeTimers.set(key, setTimeout(() => {
      this.resumeTimers.delete(key);
      this.opts.metrics.waiting.set(this.resumeTimers.size);
      consumer.resume([{ topic, partitions: [partition] }]);
    }, Math.min(delayMs, 2 ** 31 - 1)));
    this.opts.metrics.waiting.set(this.resumeTimers.size);
  }

  private onAssignment(memberId: string, assignment: Record<string, number[]>): void {
    this.opts.logger.info({ memberId, assignment }, 'partitions assigned');
    // The same member id: this instance stayed in the group through the rebalance (kafkajs gets a
    // new one after it was expelled, or restarted its consumer), so no other member read the
    // partitions it keeps in between.
    const stayed = memberId === this.memberId;
    this.memberId = memberId;
    this.assignments++;
    this.handingOver = false;
    this.lastHeartbeatOk = this.opts.clock(); // joining is as good as a heartbeat
    const assigned = new Set(Object.entries(assignment).flatMap(([topic, partitions]) => partitions.map((p) => `${topic}:${p}`)));
    for (const [key, timer] of this.resumeTimers) {
      if (!assigned.has(key)) { clearTimeout(timer); this.resumeTimers.delete(key); }
    }
    for (const key of [...this.lagByPartition.keys()]) if (!assigned.has(key)) this.lagByPartition.delete(key);
    this.blockedBy.clear();
    // kafkajs starts a partition at a seek still pending from before the rebalance (a paused
    // partition: destination full, tier record not due), else at the group's offset. A partition
    // this member kept goes on from just past the last record it read, and what it has in flight
    // still counts: nothing is read or sent twice. After an expulsion or a restart of the consumer
    // every partition starts over: read again from this instance's oldest unfinished record
    // (duplicates, never a gap), and its first batch is checked against the group's offset
    // (aboveGroupFloor), since another member may have delivered further meanwhile.
    this.groupFloors.clear();
    this.commitFailingSince = undefined; // a new generation: its commits have not failed yet
    const ownPositions = new Set<string>();
    for (const [topic, partitions] of Object.entries(assignment)) {
      for (const partition of partitions) {
        const from = stayed ? this.offsets.readPosition(topic, partition) : this.offsets.resumePoint(topic, partition);
        if (from === undefined) continue;
        this.opts.consumer.seek({ topic, partition, offset: from });
        ownPositions.add(`${topic}:${partition}`);
      }
    }
    if (stayed) this.offsets.retainOnly(assigned);
    else this.offsets.clear();
    for (const key of [...this.heldSince.keys()]) if (!stayed || !assigned.has(key)) this.heldSince.delete(key);
    for (const key of assigned) if (!this.heldSince.has(key)) this.heldSince.set(key, this.assignments);
    if (this.opts.groupOffsets && assigned.size) {
      const offsets = this.opts.groupOffsets(Object.keys(assignment)).catch((err: unknown) => {
        this.opts.logger.warn({ err }, 'could not read the group offsets: partitions resume from the consumer\'s position');
        return new Map<string, bigint>();
      });
      for (const [topic, partitions] of Object.entries(assignment)) {
        for (const partition of partitions) {
          const key = `${topic}:${partition}`;
          this.groupFloors.set(key, { offset: offsets.then((byPartition) => byPartition.get(key)), ownPosition: ownPositions.has(key) });
        }
      }
    }
    // A partition paused before the rebalance and handed back has no timer any more: read it again.
    if (this.stopping) return;
    const stale = this.opts.consumer.paused().flatMap(({ topic, partitions }) => partitions.filter((p) => !this.resumeTimers.has(`${topic}:${p}`)).map((p) => ({ topic, partitions: [p] })));
    if (stale.length) this.opts.consumer.resume(stale);
  }

  /** Commits have failed, or the one in flight has gone unanswered, for COMMIT_STALL_MS. */
  private commitsStalled(now: number): boolean {
    if (this.commitFailingSince !== undefined && now - this.commitFailingSince >= COMMIT_STALL_MS) return true;
    return this.committing !== undefined && now - this.commitSentAt >= COMMIT_STALL_MS;
  }

  private async commit(): Promise<void> {
    const list = this.offsets.committableOffsets();
    if (list.length === 0) return;
    await this.opts.consumer.commitOffsets(list);
    this.offsets.markCommitted(list);
  }

  private reportLag(topic: string): void {
    let sum = 0;
    for (const [key, lag] of this.lagByPartition) if (key.startsWith(`${topic}:`)) sum += lag;
    this.opts.metrics.lag.set({ topic }, sum);
  }
}
