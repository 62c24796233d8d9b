import type { AvroCodec } from '@switchyard/platform/codec/avro-codec';
import { RegistryUnavailableError } from '@switchyard/platform/errors';
import type { ConsumerClient, RecordBatch } from '@switchyard/platform/consuming/consumer-client';
import { ConsumerRunner, type BatchContext } from '@switchyard/platform/consuming/consumer-runner';
import type { Logger } from '@switchyard/platform/logger';
import type { FetchedRecord } from '@switchyard/platform/kafka/groupless-reader';
import type { DeferredRange, DeliveryTask } from '@switchyard/platform/schemas/generated';
import { GroupAssignment } from './assignment.js';
import { COMMIT_FAILURE_LOG_MS, type CommitScheduler } from '@switchyard/platform/consuming/commit-scheduler';
import { admit, type AdmissionInput, type DestinationView } from './admission.js';
import { BatchRanges, mayJoinRange } from './deferred-ranges.js';
import type { DeliveryMetrics } from './delivery-metrics.js';
import type { OffsetTracker, PartitionOffsets } from '@switchyard/platform/consuming/offset-tracker';
import { PauseControl } from './pause-control.js';
import { RangeReplay } from './range-replay.js';
import { RangeTasks, REGISTRY_RETRY_MS } from './range-tasks.js';
import { RateLimits } from './rate-limits.js';
import { StallDetector } from './stall-detector.js';
import type { TaskRunner } from './task-runner.js';
import { TaskDispatch } from './task-dispatch.js';
import { TaskSlots } from './task-slots.js';

/** How often, at most, the fetch loop hands kafkajs a chance to heartbeat (it sends one per heartbeatInterval). */
const HEARTBEAT_CHECK_MS = 100;
/**
 * When the group starts a rebalance, how long in-flight tasks may take to finish before what is
 * finished is committed and the member rejoins (the other members wait for it meanwhile).
 */
const HAND_OVER_MS = 1000;

export interface DeliveryConsumerOptions {
  /** The group member delivery reads through; the consumer runner over it commits acknowledged tasks. */
  client: ConsumerClient;
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
  /**
   * The delivery topic and every retry tier, whichever this instance reads: a destination's rate
   * limit is shared by the partitions of these each instance holds (rate-limits.ts, rateShare).
   */
  rateShareTopics?: string[];
  /**
   * The partition count of each topic (read at start and at every assignment, since setup may add
   * partitions). Absent (unit tests), this instance is the only one: its share is the whole limit.
   */
  partitionCounts?: (topics: string[]) => Promise<Map<string, number>>;
  /** How long a task held by its rate limit waits in the first tier (that tier's delay; 10 s when absent). */
  holdMs?: number;
  /** When the group rebalances, how long in-flight tasks may finish before the member rejoins (HAND_OVER_MS when absent). */
  handOverMs?: number;
}

/** A record of a batch, decoded: a task, or (in a tier) a range of deferred tasks left in the delivery topic. */
type DeliveryRecord = { task: DeliveryTask; range?: undefined } | { task?: undefined; range: DeferredRange };

/** One batch being handled: where it comes from, the ranges it has deferred, how far it got. */
interface BatchRun {
  topic: string;
  partition: number;
  /** `topic:partition`. */
  key: string;
  tracker: OffsetTracker;
  ranges: BatchRanges | undefined;
  /** The partition is no longer this member's to send from (rebalance, stale batch, hand-over). */
  gone: () => boolean;
  /** The last offset left behind: resolved as the batch is left. */
  resolved: string | undefined;
}

/** After a record: the next one, leave the batch, or a request started (after a wait for a slot). */
type BatchStep = 'next' | 'leave' | 'sent' | 'sent_after_wait';

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
 *
 * The batch loop is here; the rest is wired in from pieces of their own:
 * commit-scheduler.ts (when offsets are committed), pause-control.ts (which partitions wait, and
 * until when), assignment.ts (membership and where partitions start after a rebalance),
 * range-replay.ts (deferred tasks and ranges), task-slots.ts (the slots tasks hold), admission.ts
 * (what to do with each record) and task-dispatch.ts (running admitted tasks).
 */
export class DeliveryConsumer {
  /** Reads the topics, tracks each partition's taken and finished tasks, commits, pauses and seeks. */
  private readonly consumer: ConsumerRunner;
  private readonly offsets: PartitionOffsets;
  /** Global, per-destination and deferral slots, and the tasks unfinished. */
  private readonly slots: TaskSlots;
  private readonly lagByPartition = new Map<string, number>();
  /** Which destinations have stopped answering (a full one of those has its overflow deferred). */
  private readonly stalls = new StallDetector();
  /** Partitions paused until a record is due, a destination drains, or deferral slots free up. */
  private readonly pauses: PauseControl;
  /** When offsets are committed, and whether commits have stalled. */
  private readonly commits: CommitScheduler;
  /** Membership, the partitions held and since when, and where each starts after a rebalance. */
  private readonly group: GroupAssignment;
  /** Deferred tasks and ranges, and ranges that fell due run again. */
  private readonly replay: RangeReplay;
  /** Destination rate limits at this instance's share of the partitions. */
  private readonly rates: RateLimits;
  /** Runs admitted tasks in their slots and marks them finished. */
  private readonly dispatcher: TaskDispatch;
  private stopping = false;
  private lastHeartbeatCheck = 0;
  private registryLoggedAt = 0;

  constructor(private readonly opts: DeliveryConsumerOptions) {
    const stopping = () => this.stopping;
    const { client, logger, clock } = opts;
    const consumer = new ConsumerRunner({
      client, topics: opts.topics, from: 'earliest', commits: 'acknowledged', commitIntervalMs: opts.commitIntervalMs, logger, clock,
      onAssigned: ({ memberId, byTopic }) => this.onAssignment(memberId, byTopic),
      onRevoking: () => this.handOver(),
    });
    this.consumer = consumer;
    this.offsets = consumer.offsets;
    this.commits = consumer.commits;
    this.slots = new TaskSlots({ ...opts, stopping });
    this.pauses = new PauseControl({ consumer, metrics: opts.metrics, clock, stalls: this.stalls, perDestination: this.slots.perDestination, maxWaitingPerDestination: opts.maxWaitingPerDestination, stopping });
    this.group = new GroupAssignment({ consumer: client, offsets: this.offsets, logger, clock, ...(opts.groupOffsets ? { groupOffsets: opts.groupOffsets } : {}), stopping });
    const { partitionCounts } = opts;
    const shareTopics = opts.rateShareTopics ?? opts.topics;
    this.rates = new RateLimits({ clock, ...(partitionCounts ? { shares: { partitionCounts: () => partitionCounts(shareTopics), logger } } : {}) });
    opts.metrics.countRateLimitWaiting(() => this.rates.waiting);
    const rangeTasks = new RangeTasks({ codec: opts.codec, logger, setAside: opts.setAside, registryUnavailable: (err) => this.registryUnavailable(err), stopping });
    this.replay = new RangeReplay({
      runner: opts.runner, readRange: opts.readRange, metrics: opts.metrics, logger, clock, slots: this.slots, pauses: this.pauses, commits: this.commits,
      group: this.group, stalls: this.stalls, rangeTasks, rates: this.rates, holdMs: opts.holdMs ?? 10_000, runInSlots: (task, held) => this.dispatcher.runInSlots(task, held), stopping,
    });
    this.dispatcher = new TaskDispatch({
      runner: opts.runner, slots: this.slots, stalls: this.stalls, pauses: this.pauses, commits: this.commits, group: this.group, logger, clock,
      awaitReserved: (...args) => this.replay.awaitReserved(...args),
    });
    opts.metrics.countInFlight(() => this.slots.global.active);
  }

  async start(): Promise<void> {
    await this.rates.readPartitionCounts();
    this.group.listenForHeartbeats();
    await this.consumer.start((batch, context) => (this.stopping ? Promise.resolve() : this.handleBatch(batch, context)));
  }

  private async handleBatch(batch: RecordBatch, { resolveOffset, heartbeat, current }: BatchContext): Promise<void> {
    const { topic, partition } = batch;
    // kafkajs hands over a batch fetched before a rebalance even when the handler gets to it (or
    // resumes from a wait) after it: the partition may be another member's by then, which reads
    // it from the group's offset and sends the same records, at the same moment (both copies
    // reached the cluster suite's receiver within a millisecond). Such a batch is dropped unsent and
    // unresolved: the new assignment's positions decide what is read next.
    const assignment = this.group.generation;
    const run: BatchRun = {
      topic, partition, key: `${topic}:${partition}`, tracker: this.offsets.tracker(topic, partition),
      // Deferred tasks of this batch, by destination (only the delivery topic's: they stay there).
      ranges: topic === this.opts.deliveryTopic ? new BatchRanges(topic, partition) : undefined,
      gone: () => !current() || this.group.generation !== assignment || this.group.handingOver,
      resolved: undefined,
    };
    try {
      const messages = await this.group.aboveGroupFloor(batch);
      if (run.gone()) return;
      for (const message of messages) {
        if (run.gone() || this.stopping) return;
        const record = await this.readRecord(run, message);
        if (record === 'next') continue;
        if (record === 'leave') return;
        const now = this.opts.clock();
        let membershipUnconfirmed = false;
        if (this.group.membershipUnconfirmed(now)) {
          // Throws (and the batch ends) if this member was expelled meanwhile; returns without a
          // request while kafkajs is already rejoining (it has no member id then): either way no
          // heartbeat succeeds, and the record waits until one does.
          await heartbeat();
          if (run.gone() || this.stopping) return;
          membershipUnconfirmed = this.group.membershipUnconfirmed(this.opts.clock());
        }
        const step = await this.carryOut(run, message.offset, record, this.admissionInput(run, record, now, membershipUnconfirmed));
        if (step === 'leave') return;
        // kafkajs sends a heartbeat at most once per heartbeatInterval however often this is called;
        // calling it after each wait for a slot, and otherwise every HEARTBEAT_CHECK_MS, keeps
        // that (and its rebalance notice) while sparing a promise per record.
        if (step === 'sent_after_wait' || (step === 'sent' && now - this.lastHeartbeatCheck >= HEARTBEAT_CHECK_MS)) {
          this.lastHeartbeatCheck = this.opts.clock();
          await heartbeat();
        }
      }
      this.lagByPartition.set(run.key, Number(batch.offsetLag()));
      this.reportLag(topic);
    } finally {
      // Written however the batch is left: their offsets are tracked, like a deferral under way.
      if (run.ranges?.size) for (const r of run.ranges.drain()) this.replay.writeRange(r, run.tracker);
      // Not into a new assignment: kafkajs's positions then belong to it (and onAssignment set them,
      // through GroupAssignment.assign).
      if (run.resolved !== undefined && this.group.generation === assignment) resolveOffset(run.resolved);
    }
  }

  /**
   * Decodes a record: a task, or (in a tier) a range of deferred tasks left in the delivery topic.
   * Anything else is set aside to invalid-events and its offset is done; a registry that does not
   * answer makes the partition read it again later.
   */
  private async readRecord(run: BatchRun, message: { offset: string; value: Buffer | null }): Promise<DeliveryRecord | 'next' | 'leave'> {
    const { topic, partition, tracker } = run;
    let record: DeliveryRecord;
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
        this.pauses.waitUntilDue(topic, partition, message.offset, REGISTRY_RETRY_MS);
        return 'leave';
      }
      await this.opts.setAside(message.value, topic, partition, message.offset, (err as Error).message);
      if (run.gone()) return 'leave';
      this.leaveBehind(run, message.offset);
      tracker.complete(message.offset);
      this.commits.requestCommit();
      return 'next';
    }
    return fetchedSchema && run.gone() ? 'leave' : record;
  }

  /** What admission (admission.ts) is told of a record: the facts of this moment. */
  private admissionInput(run: BatchRun, record: DeliveryRecord, now: number, membershipUnconfirmed: boolean): AdmissionInput {
    const base = { now, membershipUnconfirmed, commitsStalled: this.commits.commitsStalled(now) };
    if (record.range) return { ...base, notBefore: record.range.notBefore, record: { kind: 'range' } };
    const { task } = record;
    const id = task.destinationId;
    const circuitOpen = this.opts.runner.circuitOpen(task);
    const full = !circuitOpen && this.slots.destinationFull(id);
    const destination: DestinationView = { circuitOpen, full, stalled: full && this.stalls.confirmedStalled(id) };
    const perSecond = this.opts.runner.rateLimitOf(id);
    if (perSecond !== undefined) destination.rate = { tokenInMs: this.rates.tokenInMs(id, perSecond) };
    return { ...base, notBefore: task.notBefore, record: { kind: 'task', joinable: run.ranges !== undefined && mayJoinRange(task), destination } };
  }

  /** Carries out what admission decided for a record; says whether the batch goes on. */
  private async carryOut(run: BatchRun, offset: string, record: DeliveryRecord, input: AdmissionInput): Promise<BatchStep> {
    const { topic, partition, tracker } = run;
    const admission = admit(input);
    if (admission.action === 'wait') { this.pauses.waitUntilDue(topic, partition, offset, admission.ms); return 'leave'; }
    if (record.range) {
      const { range } = record;
      return this.inDeferralSlot(run, offset, () => this.replay.releaseRange(range, topic, partition, tracker, offset));
    }
    const { task } = record;
    const id = task.destinationId;
    if (admission.action === 'join_range') {
      // Fresh tasks stay in the delivery topic: one tier record for the batch's run of them.
      if (this.stopping) return 'leave';
      this.leaveBehind(run, offset);
      const closed = run.ranges?.add(task, offset, admission.reason);
      if (closed) this.replay.writeRange(closed, tracker);
      return 'next';
    }
    // A range holds only deferred tasks of its destination, or reading it again would send this one twice.
    const ended = run.ranges?.size ? run.ranges.end(id) : undefined;
    if (ended) this.replay.writeRange(ended, tracker);
    switch (admission.action) {
      case 'wait_for_destination':
        this.pauses.waitForDestination(id, topic, partition, offset);
        return 'leave';
      case 'defer': {
        const { reason } = admission;
        return this.inDeferralSlot(run, offset, () => this.replay.deferTask(task, reason, tracker, offset));
      }
      case 'wait_for_token': {
        const at = this.rates.take(id, this.opts.runner.rateLimitOf(id) ?? 0) ?? this.opts.clock();
        this.leaveBehind(run, offset);
        this.slots.taskStarted();
        void this.dispatcher.dispatchAt(at, task, tracker, offset, run.key);
        return 'next';
      }
      case 'release_range':
        return 'next'; // for ranges only (above)
      case 'dispatch':
        if (admission.takesToken) this.rates.take(id, this.opts.runner.rateLimitOf(id) ?? 0);
        return this.dispatchInSlot(run, offset, task);
    }
  }

  /** Sends a task in a global slot: one free is taken at once (the common case); otherwise it waits for one. */
  private async dispatchInSlot(run: BatchRun, offset: string, task: DeliveryTask): Promise<BatchStep> {
    const waited = this.stopping || !this.slots.global.tryAcquire();
    if (waited && !(await this.slots.acquireUnlessStopping())) return 'leave';
    if (waited && run.gone()) { this.slots.global.release(); return 'leave'; }
    this.leaveBehind(run, offset);
    this.slots.taskStarted();
    void this.dispatcher.dispatch(task, run.tracker, offset, run.key);
    return waited ? 'sent_after_wait' : 'sent';
  }

  /**
   * Work that takes a deferral slot instead of a request slot: a range that fell due (read back
   * from the delivery topic, or deferred again), or a task for the retry tier.
   */
  private inDeferralSlot(run: BatchRun, offset: string, work: () => Promise<void>): BatchStep {
    if (this.stopping) return 'leave';
    if (!this.slots.deferrals.tryAcquire()) {
      this.pauses.waitForDeferrals(run.topic, run.partition, offset);
      return 'leave';
    }
    this.leaveBehind(run, offset);
    this.slots.taskStarted();
    void work();
    return 'next';
  }

  /**
   * A record the batch is done with for now: tracked (its offset is committed only once it is
   * finished), and kafkajs fetches the partition again from past it. The offset is resolved once,
   * as the batch is left, rather than per record: the same position, since no fetch of this
   * partition runs while its batch is handled, and a seek (destination full, tier record not due,
   * rebalance) overrides it anyway. Per record it cost two int64 parses.
   */
  private leaveBehind(run: BatchRun, offset: string): void {
    run.tracker.track(offset);
    run.resolved = offset;
  }

  /**
   * Stops fetching while staying in the group, lets in-flight tasks finish (bounded), commits what
   * finished, and only then leaves the group (ConsumerRunner.stop). Bounded so the whole stop fits
   * the shutdown step's 25 s: what is left uncommitted is sent again by the next owner.
   */
  async stop(drainMs = 15_000, commitMs = 5_000): Promise<void> {
    this.stopping = true;
    this.pauses.stop();
    await this.consumer.stop({ drainMs, commitMs, idle: () => (this.slots.unfinished > 0 ? this.slots.whenIdle() : Promise.resolve()) });
  }

  /**
   * The group is rebalancing and this member is about to rejoin: it sends nothing new and lets
   * in-flight tasks finish for a moment; the runner then commits what finished while the old
   * generation's commits are still accepted. A partition that moves to another member is then read
   * from past the tasks this one delivered, instead of from its last commit before the rebalance.
   */
  private async handOver(): Promise<void> {
    if (this.stopping) return;
    this.group.beginHandOver();
    if (this.slots.unfinished === 0) return;
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<void>((resolve) => { timer = setTimeout(resolve, this.opts.handOverMs ?? HAND_OVER_MS); });
    await Promise.race([this.slots.whenIdle(), deadline]);
    clearTimeout(timer);
  }

  /** Counts a lookup the registry did not answer; logs at most one line per COMMIT_FAILURE_LOG_MS. */
  private registryUnavailable(err: RegistryUnavailableError): void {
    this.opts.metrics.registryUnavailable.inc();
    const now = this.opts.clock();
    if (now - this.registryLoggedAt < COMMIT_FAILURE_LOG_MS) return;
    this.registryLoggedAt = now;
    this.opts.logger.warn({ err }, 'the schema registry did not answer; the record is read again once it does');
  }

  /**
   * A new assignment: membership and each partition's starting point (GroupAssignment.assign), and
   * no waits left over for partitions this member no longer holds (the runner dropped their offsets).
   */
  private onAssignment(memberId: string, assignment: Readonly<Record<string, number[]>>): void {
    const assigned = this.group.assign(memberId, assignment);
    const generation = this.group.generation;
    this.pauses.retainOnly(assigned);
    this.rates.assigned(assigned, () => this.group.generation !== generation);
    for (const key of [...this.lagByPartition.keys()]) if (!assigned.has(key)) this.lagByPartition.delete(key);
    // A partition paused before the rebalance and handed back has no timer any more: read it again.
    if (this.stopping) return;
    this.pauses.resumeStale();
  }

  private reportLag(topic: string): void {
    let sum = 0;
    for (const [key, lag] of this.lagByPartition) if (key.startsWith(`${topic}:`)) sum += lag;
    this.opts.metrics.lag.set({ topic }, sum);
  }
}
