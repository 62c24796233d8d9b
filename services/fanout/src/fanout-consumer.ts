import type { AvroCodec, Decoded } from '@switchyard/platform/codec/avro-codec';
import type { ConfigState } from '@switchyard/platform/config-view/config-state';
import { unreadableRecord } from '@switchyard/platform/codec/invalid-event';
import { CodecError, RegistryUnavailableError } from '@switchyard/platform/errors';
import type { ConsumedRecord, ConsumerClient, RecordBatch } from '@switchyard/platform/consuming/consumer-client';
import { ConsumerRunner } from '@switchyard/platform/consuming/consumer-runner';
import { writtenBySwitchyard } from '@switchyard/platform/kafka/record-origin';
import type { TopicNames } from '@switchyard/platform/kafka/topics';
import { uncommittedRecords, type PartitionLease, type PartitionTransactions } from '@switchyard/platform/exactly-once/partition-transactions';
import type { Logger } from '@switchyard/platform/logger';
import { appliedRetryPolicy } from '@switchyard/platform/destination-retry';
import type { DestinationStates, HoldReason } from '@switchyard/platform/holds/destination-states';
import type { RetryPolicy } from '@switchyard/platform/retry-schedule';
import type { DeferralTrace, FanoutTrace } from '@switchyard/platform/schemas/generated';
import type { FilterReason, UsageOutcome } from '@switchyard/platform/usage/usage-tally';
import { decideFanout, fanoutTrace, type EventFacts } from './fanout-decision.js';
import type { FanoutMetrics, UnreadableReason } from './fanout-metrics.js';
import { HeldRanges } from './held-ranges.js';
import { taskPartition, type PartitionLayout } from './task-partitions.js';

export interface FanoutDeps {
  /** One transactional producer per ingest partition: tasks, invalid records and the partition's offset commit together. */
  transactions: Pick<PartitionTransactions, 'withPartition' | 'assign'>;
  codec: AvroCodec;
  config: ConfigState;
  topics: TopicNames;
  metrics: FanoutMetrics;
  logger: Logger;
  clock: () => number;
  /** Write one FanoutTrace per event to the delivery-attempts topic, in the batch's transaction. */
  recordTrace: boolean;
  /** The partition counts: which delivery partitions this batch's tasks go to (task-partitions.ts). */
  layout: PartitionLayout;
  /**
   * Usage, counted once the batch committed: calls filtered by integrations or by destination
   * filters, and direct records (no origin header) accepted or rejected by the call rules.
   */
  countUsage?: (sourceId: string, receivedAt: number, outcome: UsageOutcome, n: number, reason?: FilterReason) => void;
  /**
   * Destinations delivery reports refusing (every circuit open, or over their rate limit), and the
   * retry policy: their tasks are held (one tier record per batch instead of the tasks,
   * held-ranges.ts). Absent: every task is written.
   */
  holds?: { states: DestinationStates; policy: RetryPolicy };
}

type OutMessage = { key: string | null; value: Buffer };
type Counted = { sourceId: string; receivedAt: number; outcome: UsageOutcome; reason?: FilterReason };

/** More than the partitions one instance owns in practice: every batch of a fetch runs at once. */
const PARTITIONS_AT_ONCE = 64;
/**
 * A batch holding a record whose writer schema the registry did not answer for (restarting, say)
 * is read again this much later; the other partitions go on meanwhile.
 */
const REGISTRY_RETRY_MS = 1000;
/** At most one "registry did not answer" line per this long. */
const REGISTRY_LOG_MS = 5000;

/**
 * Consume → produce → commit, exactly once: each batch of ingest records becomes delivery tasks
 * (and invalid-events records) written in one Kafka transaction together with the batch's next
 * offset, under the partition's own transactional id (PartitionTransactions). A crash or rebalance
 * before the commit aborts it all and the batch is read again; after it, the offset is committed and
 * nothing is read twice. An instance that lost a partition while paused is fenced by the new owner,
 * and records the consumer fetched from before the previous owner's last commit are skipped. A
 * record that cannot be decoded goes to invalid-events with the reason, inside the same transaction,
 * and never stops the partition; so does a direct record (written by no Switchyard service) that
 * breaks a call rule. A schema registry that does not answer says nothing about a record: that
 * batch is read again a second later. Reads through `runner` (fanoutRunner); resolves once running.
 */
export async function runFanout(runner: ConsumerRunner, deps: FanoutDeps): Promise<void> {
  let registryLoggedAt = 0;
  await runner.start(async (batch, ctx) => {
    if (batch.messages.length === 0 || !ctx.current()) return;
    try {
      await deps.transactions.withPartition(batch.partition, async (lease) => {
        const messages = uncommittedRecords(batch, lease, (to) => runner.seek(to));
        if (messages.length < batch.messages.length) deps.metrics.skipped.inc(batch.messages.length - messages.length);
        if (messages.length) await processBatch(deps, batch, messages, lease);
      });
    } catch (err) {
      if (!(err instanceof RegistryUnavailableError)) throw err;
      // Nothing of the batch was written (it failed before its transaction began): read it again
      // later from its first record; what a previous commit covered is skipped then, as always.
      deps.metrics.registryUnavailable.inc();
      if (deps.clock() - registryLoggedAt >= REGISTRY_LOG_MS) {
        registryLoggedAt = deps.clock();
        deps.logger.warn({ err, partition: batch.partition }, 'the schema registry did not answer; the batch is read again once it does');
      }
      runner.readAgainLater({ topic: batch.topic, partition: batch.partition, offset: batch.messages[0]!.offset }, REGISTRY_RETRY_MS);
      return;
    }
    await ctx.heartbeat();
  });
}

/**
 * The runner fan-out reads ingest with, from its first record where the group has no offset. The
 * handler commits in its transactions (the position log); the partition batches of one fetch are
 * processed side by side, each in its partition's transaction. Partitions assigned to this
 * instance are fenced in before their first batch; lost ones given up.
 */
export function fanoutRunner(client: ConsumerClient, deps: Pick<FanoutDeps, 'transactions' | 'topics' | 'logger'>): ConsumerRunner {
  const { topics } = deps;
  return new ConsumerRunner({
    client, topics: [topics.ingest], from: 'earliest', commits: 'transactional', partitionsAtOnce: PARTITIONS_AT_ONCE, logger: deps.logger,
    onAssigned: (assignment) => deps.transactions.assign(assignment.byTopic[topics.ingest] ?? []),
  });
}

async function processBatch(deps: FanoutDeps, batch: RecordBatch, messages: ConsumedRecord[], lease: PartitionLease): Promise<void> {
  const { topics } = deps;
  const tasks: Array<{ key: string; value: Buffer }> = [];
  const invalid: OutMessage[] = [];
  const traces: FanoutTrace[] = [];
  const counted: Counted[] = [];
  const now = deps.clock();
  const perDestination = new Map<string, number>();
  // Whether (and why) each destination's tasks are held, decided once per batch.
  const holding = new Map<string, HoldReason | null>();
  const { holds } = deps;
  const held = holds ? new HeldRanges(batch.topic, batch.partition) : undefined;
  for (const message of messages) {
    deps.metrics.consumed.inc();
    let decoded: Decoded;
    try {
      decoded = await deps.codec.decode(message.value);
    } catch (err) {
      if (err instanceof RegistryUnavailableError) throw err; // the record may be fine: the batch is read again
      const reason: UnreadableReason = err instanceof CodecError && err.code === 'CODEC_UNKNOWN_SCHEMA' ? 'unknown_schema' : 'undecodable';
      invalid.push(invalidRecord(deps, reason, (err as Error).message, message.value, batch.topic, batch.partition, message.offset, now));
      deps.metrics.invalid.inc({ reason });
      continue;
    }
    // A record with no origin header came from another producer: the call rules apply to it.
    const direct = writtenBySwitchyard(message.headers) ? undefined : { bytes: message.value?.length ?? 0 };
    const decision = decideFanout(decoded, deps.config, now, direct);
    if (decision.usage && decision.event) counted.push({ sourceId: decision.event.sourceId, receivedAt: decision.event.receivedAt, outcome: decision.usage });
    if (decision.kind !== 'invalid' && deps.recordTrace) {
      traces.push(fanoutTrace(decision, now));
    }
    if (decision.kind === 'tasks') {
      for (const { key, task } of decision.tasks) {
        const holdReason = held && holds ? heldFor(deps.config, holds.states, holding, task.destinationId, now) : null;
        if (held && holdReason) {
          held.add(task.destinationId, task.sourceId, Number(message.offset), task.messageId, holdReason);
          continue;
        }
        tasks.push({ key, value: deps.codec.encode('io.switchyard.pipeline.DeliveryTask', task) });
        perDestination.set(task.destinationId, (perDestination.get(task.destinationId) ?? 0) + 1);
      }
      if (decision.filteredDestinationIds.length) {
        // Kept from some destinations by their filters: counted once per call, like a whole one.
        deps.metrics.filtered.inc({ reason: 'filter' });
        counted.push({ sourceId: decision.event.sourceId, receivedAt: decision.event.receivedAt, outcome: 'filtered', reason: 'filter' });
      }
    } else if (decision.kind === 'filtered') {
      deps.metrics.filtered.inc({ reason: decision.reason });
      if (decision.reason === 'integrations' || decision.reason === 'filter') {
        counted.push({ sourceId: decision.event.sourceId, receivedAt: decision.event.receivedAt, outcome: 'filtered', reason: decision.reason });
      }
    } else {
      invalid.push(invalidRecord(deps, decision.reason, decision.message, message.value, batch.topic, batch.partition, message.offset, now, decision.event));
      deps.metrics.invalid.inc({ reason: decision.reason });
    }
  }

  const holdRecords = held?.size && holds ? held.records((id) => appliedRetryPolicy(deps.config.destination(id), holds.policy), holds.policy.tiersMs, now) : [];
  const deferrals: DeferralTrace[] = deps.recordTrace ? holdRecords.flatMap((h) => h.trace ? [h.trace] : []) : [];
  const end = deps.metrics.transaction.startTimer();
  try {
    await lease.commit([
      ...tasks.map((m) => ({ topic: topics.delivery, partition: taskPartition(deps.layout, batch.partition, m.key), ...m })),
      ...holdRecords.map((h) => ({ topic: topics.retry(h.tier), key: h.key, value: deps.codec.encode('io.switchyard.pipeline.DeferredRange', h.range) })),
      ...invalid.map((m) => ({ topic: topics.invalidEvents, ...m })),
      // One trace record per batch, not per event: Kafka's per-record cost stays off this hop.
      ...(traces.length || deferrals.length ? [{ topic: topics.deliveryAttempts, key: `fanout-${batch.partition}`, value: deps.codec.encode('io.switchyard.pipeline.TraceRecords', { fanouts: traces, attempts: [], deferrals }) }] : []),
    ], (BigInt(batch.lastOffset()) + 1n).toString());
  } finally {
    end();
  }
  for (const [destination, n] of perDestination) deps.metrics.tasks.inc({ destination }, n);
  for (const { range } of holdRecords) deps.metrics.held.inc({ destination: range.destinationId }, range.tasks);
  // After the commit: an aborted batch is read again and must not count twice.
  for (const { sourceId, receivedAt, outcome, reason } of counted) deps.countUsage?.(sourceId, receivedAt, outcome, 1, reason);
  deps.metrics.batchRecords.observe(messages.length);
  deps.metrics.lag.set({ partition: String(batch.partition) }, Math.max(0, Number(BigInt(batch.highWatermark) - BigInt(batch.lastOffset()) - 1n)));
}

/**
 * Whether (and why) a destination's tasks are held in this batch: asked of the states once per
 * batch. A rate limit's hold lapses at once when the destination no longer has a limit.
 */
function heldFor(config: ConfigState, states: DestinationStates, holding: Map<string, HoldReason | null>, destinationId: string, now: number): HoldReason | null {
  let reason = holding.get(destinationId);
  if (reason === undefined) {
    reason = states.heldFor(destinationId, now) ?? null;
    if (reason === 'rate_limited' && !config.destination(destinationId)?.rateLimit) reason = null;
    holding.set(destinationId, reason);
  }
  return reason;
}

function invalidRecord(deps: FanoutDeps, reason: string, message: string, value: Buffer | null, topic: string, partition: number, offset: string, now: number, event?: EventFacts): OutMessage {
  return {
    key: null,
    value: deps.codec.encode('io.switchyard.pipeline.InvalidEvent', unreadableRecord('fanout', reason, message, { value, topic, partition, offset }, now, event)),
  };
}
