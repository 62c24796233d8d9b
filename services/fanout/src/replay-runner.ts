import { randomUUID } from 'node:crypto';
import type { AvroCodec } from '@switchyard/platform/codec/avro-codec';
import { RegistryUnavailableError } from '@switchyard/platform/errors';
import type { ConfigState } from '@switchyard/platform/config-view/config-state';
import { compileFilter, parseDestinationFilter, type CompiledFilter } from '@switchyard/platform/filters/destination-filter';
import type { ConsumedRecord } from '@switchyard/platform/consuming/consumer-client';
import { ConsumerRunner } from '@switchyard/platform/consuming/consumer-runner';
import { createProducer, type Kafka, type Producer } from '@switchyard/platform/kafka/client';
import { kafkajsConsumer } from '@switchyard/platform/kafka/kafkajs-consumer';
import { groupIds, replayTransactionalId, throwawayGroupPrefixes } from '@switchyard/platform/kafka/groups';
import { writtenBySwitchyard } from '@switchyard/platform/kafka/record-origin';
import type { TopicNames } from '@switchyard/platform/kafka/topics';
import { commitInTransaction, type TransactionRecord } from '@switchyard/platform/exactly-once/transaction';
import type { Logger } from '@switchyard/platform/logger';
import type { Replay, ReplayPartition, ReplayProgress } from '@switchyard/platform/schemas/generated';
import { decideFanout, type ReplayTarget } from './fanout-decision.js';
import { chunkSize, isTerminal, mayBeTruncated, pauseFor, planPartitions, remaining } from './replay-plan.js';

export interface ReplayRunnerDeps {
  kafka: Kafka;
  codec: AvroCodec;
  config: ConfigState;
  topics: TopicNames;
  logger: Logger;
  clock: () => number;
  /** The topic prefix: names the coordinator's group and each replay's transactional id. */
  prefix: string;
  /** No replay reads faster than this (ingest records per second), whatever it asked for. */
  maxRate: number;
}

/** Keys of the replays topic: a request (control) and its progress (the runner). */
export const replayKeys = { replay: (id: string) => `replay:${id}`, progress: (id: string) => `progress:${id}` };

/** An instance that died mid-transaction holds read_committed readers of the replays topic until this. */
const TRANSACTION_TIMEOUT_MS = 10_000;

/**
 * Runs replays (docs/delivery.md, "Replays of a time range"): follows the replays topic in a consumer group of all fan-out
 * instances, so the one that owns its single partition runs every replay, and a restart or crash
 * hands them to another. It starts a replay only once it has read the topic up to where it ended at
 * its join (its progress, committed with its tasks, is then known), and resumes it exactly after the
 * last committed chunk.
 */
export class ReplayRunner {
  private readonly replays = new Map<string, Replay>();
  private readonly progress = new Map<string, ReplayProgress>();
  private readonly jobs = new Map<string, ReplayJob>();
  private runner: ConsumerRunner | undefined;
  private owner = false;
  private target: bigint | undefined;
  private position = 0n;
  private caughtUp = false;
  private stopped = false;
  private readonly log: Logger;

  constructor(private readonly deps: ReplayRunnerDeps) {
    this.log = deps.logger.child({ component: 'replays' });
  }

  async start(): Promise<void> {
    const { kafka, topics, prefix } = this.deps;
    const client = kafkajsConsumer(kafka, { groupId: groupIds(prefix).fanoutReplays, sessionTimeout: 10_000, heartbeatInterval: 1000, maxWaitTimeInMs: 500 }, this.log);
    // Nothing commits this group's offsets (the progress transactions carry none): every join reads
    // the replays topic from its start, which is how the owner learns every replay and its progress.
    const runner = new ConsumerRunner({
      client, topics: [topics.replays], from: 'earliest', commits: 'none', logger: this.log,
      onAssigned: (assignment) => void this.onJoin(assignment.byTopic[topics.replays] ?? []),
    });
    this.runner = runner;
    client.on('batchEnd', ({ topic, lastOffset }) => {
      if (topic !== topics.replays) return;
      const next = BigInt(lastOffset) + 1n;
      if (next > this.position) this.position = next;
      this.checkCaughtUp();
    });
    await runner.start(async (batch) => {
      for (const message of batch.messages) {
        const key = message.key?.toString('utf8') ?? '';
        if (!message.value) continue;
        try {
          const decoded = await this.deps.codec.decode(message.value);
          if (decoded.name === 'io.switchyard.pipeline.Replay') this.replays.set(decoded.value.id, decoded.value);
          else if (decoded.name === 'io.switchyard.pipeline.ReplayProgress') this.applyProgress(decoded.value);
        } catch (err) {
          if (err instanceof RegistryUnavailableError) throw err; // read again, not skipped
          this.log.warn({ err, key }, 'unreadable replays record skipped');
        }
      }
      this.reconcile();
    });
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await Promise.all([...this.jobs.values()].map((j) => j.stop()));
    await this.runner?.stop();
  }

  /** Progress only moves forward: an older record read back after a newer one this process wrote is ignored. */
  private applyProgress(p: ReplayProgress): void {
    const known = this.progress.get(p.id);
    if (known && (isTerminal(known) || doneCount(known) > doneCount(p))) return;
    this.progress.set(p.id, p);
  }

  private async onJoin(assigned: number[]): Promise<void> {
    this.caughtUp = false;
    this.target = undefined;
    this.owner = assigned.length > 0;
    // Ownership may have moved: a job keeps running only if this instance still owns the topic.
    if (!this.owner) {
      await Promise.all([...this.jobs.values()].map((j) => j.stop()));
      return;
    }
    const admin = this.deps.kafka.admin();
    try {
      await admin.connect();
      const [offsets] = await admin.fetchTopicOffsets(this.deps.topics.replays);
      this.target = BigInt(offsets?.high ?? '0');
    } catch (err) {
      this.log.warn({ err }, 'reading the end of the replays topic failed; replays wait for the next join');
      return;
    } finally {
      await admin.disconnect().catch(() => undefined);
    }
    this.checkCaughtUp();
  }

  private checkCaughtUp(): void {
    if (this.caughtUp || this.target === undefined || this.position < this.target) return;
    this.caughtUp = true;
    this.reconcile();
  }

  private reconcile(): void {
    if (!this.caughtUp || !this.owner || this.stopped) return;
    for (const [id, replay] of this.replays) {
      const job = this.jobs.get(id);
      if (job) {
        if (replay.cancelRequestedAt !== null) job.cancel();
        continue;
      }
      if (isTerminal(this.progress.get(id))) continue;
      const started = new ReplayJob(this.deps, this.log, replay, this.progress.get(id), (p) => this.applyProgress(p));
      this.jobs.set(id, started);
      this.log.info({ replayId: id, destinationId: replay.destinationId }, 'replay started');
      void started.run().catch((err: unknown) => this.log.error({ err, replayId: id }, 'replay stopped by an error; it resumes at the next join'))
        .finally(() => { this.jobs.delete(id); });
    }
  }
}

/** Records handled so far, whatever the partition: progress only grows. */
function doneCount(p: ReplayProgress): number {
  return p.partitions.reduce((n, x) => n + (x.next - x.start), 0);
}

/** One replay, run by one instance: reads its ranges of the ingest topic and writes tasks with its progress. */
class ReplayJob {
  private cancelled = false;
  private stopped = false;
  private runner: ConsumerRunner | undefined;
  private producer: Producer | undefined;
  private progress: ReplayProgress | undefined;
  private finished!: () => void;
  private readonly done = new Promise<void>((resolve) => { this.finished = resolve; });
  private readonly truncated = new Set<number>();
  private readonly sleepers = new Set<() => void>();
  private commits: Promise<unknown> = Promise.resolve();

  constructor(private readonly deps: ReplayRunnerDeps, private readonly log: Logger, private readonly replay: Replay, progress: ReplayProgress | undefined, private readonly onProgress: (p: ReplayProgress) => void) {
    this.progress = progress;
    if (replay.cancelRequestedAt !== null) this.cancelled = true;
  }

  cancel(): void {
    if (this.cancelled) return;
    this.cancelled = true;
    this.wake();
    this.cancelSoon();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.wake();
    this.finished();
    await this.done;
  }

  async run(): Promise<void> {
    const { kafka, prefix } = this.deps;
    this.producer = createProducer(kafka, { transactionalId: replayTransactionalId(prefix, this.replay.id), transactionTimeout: TRANSACTION_TIMEOUT_MS });
    await this.producer.connect();
    try {
      const progress = this.progress ?? await this.plan();
      this.progress = progress;
      if (this.cancelled) return await this.finish('cancelled');
      const broken = this.destinationProblem();
      if (broken) return await this.finish('failed', broken);
      if (remaining(progress.partitions) === 0) return await this.finish('done');
      await this.consume();
      await this.done;
    } finally {
      await this.runner?.stop().catch(() => undefined);
      await this.producer.disconnect().catch(() => undefined);
    }
  }

  /** The offsets of `from` and `to` on every partition, and the first progress record. */
  private async plan(): Promise<ReplayProgress> {
    const { kafka, topics, clock } = this.deps;
    const admin = kafka.admin();
    await admin.connect();
    let partitions;
    try {
      const now = clock();
      const [ends, froms, tos] = await Promise.all([
        admin.fetchTopicOffsets(topics.ingest),
        admin.fetchTopicOffsetsByTimestamp(topics.ingest, this.replay.from),
        // A `to` in the future stops at the end of the topic as it is now.
        admin.fetchTopicOffsetsByTimestamp(topics.ingest, Math.min(this.replay.to, now)),
      ]);
      const at = (list: Array<{ partition: number; offset: string }>, p: number) => BigInt(list.find((o) => o.partition === p)?.offset ?? '-1');
      const offsets = ends.map((e) => ({ partition: e.partition, low: BigInt(e.low), high: BigInt(e.high), from: at(froms, e.partition), to: this.replay.to > now ? BigInt(e.high) : at(tos, e.partition) }));
      partitions = planPartitions(offsets);
      for (const p of partitions) if (mayBeTruncated(p, offsets.find((o) => o.partition === p.partition)!.low)) this.truncated.add(p.partition);
    } finally {
      await admin.disconnect().catch(() => undefined);
    }
    const now = clock();
    const progress: ReplayProgress = { id: this.replay.id, state: 'running', partitions, scanned: 0, matched: 0, enqueued: 0, startedAt: now, updatedAt: now, runningMs: 0, error: null };
    await this.commit([], progress);
    this.log.info({ replayId: this.replay.id, records: remaining(partitions) }, 'replay planned');
    return progress;
  }

  private destinationProblem(): string | undefined {
    const d = this.deps.config.destination(this.replay.destinationId);
    if (!d) return 'the destination was deleted';
    if (!d.enabled) return 'the destination is disabled';
    if (!this.deps.config.source(d.sourceId)?.enabled) return 'the source is disabled or deleted';
    return undefined;
  }

  private target(): ReplayTarget {
    let filter: CompiledFilter | null = null;
    if (this.replay.filter) {
      const parsed = parseDestinationFilter(JSON.parse(this.replay.filter));
      if (parsed.ok) filter = compileFilter(parsed.filter);
    }
    return { destinationId: this.replay.destinationId, filter };
  }

  private async consume(): Promise<void> {
    const { kafka, topics, codec, config, clock } = this.deps;
    const rate = Math.max(1, Math.min(this.replay.rate, this.deps.maxRate));
    const chunk = chunkSize(rate);
    const target = this.target();
    // A group of its own, never committed: where it reads is the replay's progress (seeks below).
    const client = kafkajsConsumer(kafka, { groupId: `${throwawayGroupPrefixes(this.deps.prefix).replayReader}${this.replay.id}-${randomUUID()}`, sessionTimeout: 30_000, heartbeatInterval: 3000, maxWaitTimeInMs: 500, maxBytesPerPartition: 512 * 1024 });
    const runner = new ConsumerRunner({ client, topics: [topics.ingest], from: 'earliest', commits: 'none', logger: this.log });
    this.runner = runner;
    // Timing for the rate: this run's records over this run's time (a restart starts a new window).
    const startedAt = clock();
    const baseRunningMs = this.progress!.runningMs;
    let scannedThisRun = 0;
    const part = (partition: number) => this.progress!.partitions.find((p) => p.partition === partition);
    const pauseIfDone = (partition: number) => {
      const p = part(partition);
      if (p && p.next >= p.end) runner.pause([{ topic: topics.ingest, partitions: [partition] }]);
    };
    /** Moves a partition past offsets that hold nothing to replay (markers); written with the next commit. */
    const skipTo = (partition: number, offset: number) => {
      const p = part(partition);
      if (!p || offset <= p.next) return;
      this.progress = { ...this.progress!, partitions: this.progress!.partitions.map((x) => (x.partition === partition ? { ...x, next: Math.min(x.end, offset) } : x)) };
      pauseIfDone(partition);
      if (remaining(this.progress.partitions) === 0) void this.finish('done').catch((err: unknown) => this.log.warn({ err }, 'finishing a replay failed'));
    };

    client.on('batchEnd', ({ topic, partition, lastOffset, records }) => {
      // A batch of only transaction markers or aborted records (audiences writes in transactions).
      if (topic === topics.ingest && records === 0) skipTo(partition, Number(lastOffset) + 1);
    });
    await runner.start(async (batch, ctx) => {
      const first = part(batch.partition);
      if (!first || this.stopped || isTerminal(this.progress)) return;
      const messages = batch.messages.filter((m) => { const o = Number(m.offset); return o >= first.next && o < first.end; });
      for (let i = 0; i < messages.length; i += chunk) {
        if (this.stopped || !ctx.current() || isTerminal(this.progress)) return;
        if (this.cancelled) { await this.finish('cancelled'); return; }
        const broken = this.destinationProblem();
        if (broken) { await this.finish('failed', broken); return; }
        const p = part(batch.partition)!;
        const slice = messages.slice(i, i + chunk);
        const { records, matched, retainedFrom } = await this.chunkTasks(slice, p, target);
        const last = Number(slice.at(-1)!.offset);
        scannedThisRun += slice.length;
        const current = this.progress!;
        const partitions = current.partitions.map((x) => (x.partition === p.partition ? { ...x, next: last + 1, retainedFrom } : x));
        const next: ReplayProgress = {
          ...current, partitions, scanned: current.scanned + slice.length, matched: current.matched + matched,
          enqueued: current.enqueued + records.length, updatedAt: clock(), runningMs: baseRunningMs + (clock() - startedAt),
        };
        if (remaining(partitions) === 0) next.state = 'done';
        if (!(await this.commit(records, next))) return;
        await ctx.heartbeat();
        if (next.state === 'done') { this.log.info({ replayId: this.replay.id, scanned: next.scanned, enqueued: next.enqueued }, 'replay finished'); this.finished(); return; }
        await this.sleep(pauseFor(scannedThisRun, clock() - startedAt, rate));
      }
      // Markers at the end of the batch, past its last record, are inside the range too.
      skipTo(batch.partition, Number(batch.lastOffset()) + 1);
      pauseIfDone(batch.partition);
    });
    for (const p of this.progress!.partitions) {
      if (p.next < p.end) runner.seek({ topic: topics.ingest, partition: p.partition, offset: String(p.next) });
      else pauseIfDone(p.partition);
    }
  }

  /**
   * The tasks of one chunk of a partition's records, decided for the replay's destination, and
   * how many matched. The partition's first record tells how far back it is still retained, when
   * the range began before it (`truncated`).
   */
  private async chunkTasks(slice: readonly ConsumedRecord[], p: ReplayPartition, target: ReplayTarget): Promise<{ records: TransactionRecord[]; matched: number; retainedFrom: number | null }> {
    const { topics, codec, config, clock } = this.deps;
    const records: TransactionRecord[] = [];
    let matched = 0;
    let retainedFrom = p.retainedFrom;
    const now = clock();
    for (const m of slice) {
      if (this.truncated.has(p.partition) && Number(m.offset) === p.start) {
        this.truncated.delete(p.partition);
        if (Number(m.timestamp) > this.replay.from) retainedFrom = Number(m.timestamp);
      }
      let decision;
      try {
        const direct = writtenBySwitchyard(m.headers) ? undefined : { bytes: m.value?.length ?? 0 };
        decision = decideFanout(await codec.decode(m.value), config, now, direct, target);
      } catch (err) {
        if (err instanceof RegistryUnavailableError) throw err; // the record may be fine: the batch is read again
        continue; // fan-out set it aside on invalid-events when it first read it
      }
      if (decision.kind !== 'tasks') continue;
      matched += decision.tasks.length;
      for (const { key, task } of decision.tasks) records.push({ topic: topics.delivery, key, value: codec.encode('io.switchyard.pipeline.DeliveryTask', task) });
    }
    return { records, matched, retainedFrom };
  }

  /** Writes the final state (with no tasks) and ends the job. */
  private async finish(state: 'done' | 'cancelled' | 'failed', error: string | null = null): Promise<void> {
    const now = this.deps.clock();
    const base = this.progress ?? { id: this.replay.id, state, partitions: [], scanned: 0, matched: 0, enqueued: 0, startedAt: now, updatedAt: now, runningMs: 0, error: null };
    if (await this.commit([], { ...base, state, error, updatedAt: now })) {
      this.log.info({ replayId: this.replay.id, state, error, scanned: base.scanned, enqueued: base.enqueued }, 'replay finished');
    }
    this.finished();
  }

  /**
   * Tasks and progress in one transaction: a restart resumes exactly after what was committed.
   * Commits run one at a time; none is written once the replay reached a final state (false).
   */
  private commit(records: TransactionRecord[], progress: ReplayProgress): Promise<boolean> {
    const run = this.commits.then(async () => {
      if (isTerminal(this.progress) || this.stopped) return false;
      const { codec, topics } = this.deps;
      await commitInTransaction(this.producer!, [...records, { topic: topics.replays, key: replayKeys.progress(progress.id), value: codec.encode('io.switchyard.pipeline.ReplayProgress', progress) }]);
      this.progress = progress;
      this.onProgress(progress);
      return true;
    });
    this.commits = run.catch(() => false);
    return run;
  }

  /** Cancellation also ends a replay that is waiting for records. */
  private cancelSoon(): void {
    setTimeout(() => { if (!isTerminal(this.progress) && !this.stopped && this.progress) void this.finish('cancelled').catch(() => undefined); }, 1000).unref();
  }

  private sleep(ms: number): Promise<void> {
    if (ms <= 0 || this.cancelled || this.stopped) return Promise.resolve();
    return new Promise((resolve) => {
      const wake = () => { clearTimeout(timer); this.sleepers.delete(wake); resolve(); };
      const timer = setTimeout(wake, ms);
      this.sleepers.add(wake);
    });
  }

  private wake(): void {
    for (const wake of [...this.sleepers]) wake();
  }
}
