import type { AvroCodec } from '@switchyard/platform/codec/avro-codec';
import type { ConfigState, Destination } from '@switchyard/platform/config-view/config-state';
import type { BatchingProducer } from '@switchyard/platform/kafka/batching-producer';
import type { TopicNames } from '@switchyard/platform/kafka/topics';
import type { Logger } from '@switchyard/platform/logger';
import { appliedRetryPolicy, type AppliedRetryPolicy } from '@switchyard/platform/destination-retry';
import { nextRetryUnder, tierReadFrom, type RetryPolicy } from '@switchyard/platform/retry-schedule';
import type { DeadLetter, DeferralTrace, DeferredRange, DeliveryAttempt, DeliveryTask } from '@switchyard/platform/schemas/generated';
import { isBreakerFailure, type CircuitBreaker } from './circuit-breaker.js';
import type { PendingRange } from './deferred-ranges.js';
import { statusClass, type DeliveryMetrics } from './delivery-metrics.js';
import type { FailedAttemptLog } from './failed-attempt-log.js';
import type { HealthPublisher } from './health-publisher.js';
import type { RefusalPublisher } from './refusal-publisher.js';
import { combineUrlOutcomes, type UrlOutcome } from './multi-url.js';
import { prepareDestination, urlsToTry, type PreparedDestination } from './prepared-destination.js';
import { classifyAttempt, type AttemptResult, type DeadLetterReason } from './outcome.js';
import { standardSigning, type StandardSigning } from './standard-signing.js';
import type { WebhookClient } from './webhook-client.js';

export interface TaskRunnerDeps {
  config: ConfigState;
  client: WebhookClient;
  breaker: CircuitBreaker;
  /** The deployment's retry policy: its tiers are the tier topics; a destination may carry its own policy on them. */
  policy: RetryPolicy;
  codec: AvroCodec;
  /** Writes retry-tier and dead-letter records (acks=all). */
  producer: BatchingProducer;
  topics: TopicNames;
  metrics: DeliveryMetrics;
  logger: Logger;
  clock: () => number;
  /** True once shutdown began: stop retrying writes, the task stays uncommitted and is read again. */
  stopping: () => boolean;
  /**
   * Records each attempt for the trace (fire-and-forget: it must return at once and never throw
   * into delivery). Absent when DELIVERY_RECORD_ATTEMPTS is off.
   */
  recordAttempt?: (record: DeliveryAttempt | DeferralTrace) => void;
  /** Logs failed requests, rate-limited per destination. */
  failures?: FailedAttemptLog;
  /** Reports destinations refusing every request or held by their rate limit, and taking work again, to fan-out (which then holds their tasks). */
  refusals?: Pick<RefusalPublisher, 'refusing' | 'answered' | 'rateLimited' | 'underLimit'>;
  /** Reports whether each attempt that made requests succeeded: the failing clock control disables destinations by. */
  health?: Pick<HealthPublisher, 'attempted'>;
}

interface Failure { status: number | null; excerpt: string | null; error: string | null }

/** One request of an attempt as the trace shows it; urlIndex -1 when no request was made. */
export interface UrlAttempt { urlIndex: number; at: number; latencyMs: number; status: number | null; error: string | null }

type AttemptOutcome = Pick<DeliveryAttempt, 'outcome' | 'nextTier' | 'notBefore' | 'deadLetterReason' | 'retryStep'>;

/**
 * The tier a task was read from, as the policy it follows placed it (retry-schedule.ts: attempt n
 * waits in tier min(n, tiers) under the default policy); 0 is the delivery topic.
 */
export function tierOf(task: DeliveryTask, applied: AppliedRetryPolicy, topicTiersMs: readonly number[]): number {
  return tierReadFrom(applied, topicTiersMs, Math.max(0, task.attempt));
}

/** The trace records of one attempt of a task: one per URL tried, all carrying the task's outcome and the policy it follows. */
export function attemptRecords(task: DeliveryTask, tier: number, retryPolicy: AppliedRetryPolicy['source'], attempts: UrlAttempt[], outcome: AttemptOutcome): DeliveryAttempt[] {
  return attempts.map((a) => ({
    messageId: task.messageId, taskId: task.taskId, sourceId: task.sourceId, destinationId: task.destinationId, eventType: task.eventType,
    urlIndex: a.urlIndex, attempt: task.attempt + 1, tier, status: a.status, error: a.error,
    latencyMs: Math.max(0, Math.round(a.latencyMs)), at: a.at, receivedAt: task.receivedAt, retryPolicy, ...outcome,
  }));
}

/**
 * One attempt of one delivery task, and what follows from it: POST to every eligible URL at once,
 * then either done (a URL accepted), or the task goes to its next retry tier carrying the URLs
 * still worth trying, or to the dead-letter topic with the reason. Resolves only once that outcome
 * is durable in Kafka, so the caller may then let the task's offset be committed.
 */
export class TaskRunner {
  /** Per destination object (a config change replaces it): its URLs, their indexes, headers and breaker keys. */
  private readonly prepared = new WeakMap<Destination, PreparedDestination>();
  /** The value delivery_breaker_open last showed per destination. */
  private readonly breakerShown = new Map<string, 0 | 1>();

  constructor(private readonly deps: TaskRunnerDeps) {}

  /**
   * One attempt and its outcome. `mayFollowUp` is asked, after the requests, before a retry or
   * dead-letter record is written: false leaves the task unfinished (run resolves false) for the
   * partition's next owner, which has read it again and sends it too.
   */
  async run(task: DeliveryTask, mayFollowUp?: () => Promise<boolean>): Promise<boolean> {
    const { config, metrics } = this.deps;
    const now = this.deps.clock();
    const destination = config.destination(task.destinationId);
    if (!destination) { await this.deadLetter(task, now, 'destination_removed', { status: null, excerpt: null, error: 'the destination was deleted' }, false, task, noRequest(now, 'destination_removed')); return true; }
    if (!destination.enabled) { await this.deadLetter(task, now, 'destination_disabled', { status: null, excerpt: null, error: 'the destination is disabled' }, false, task, noRequest(now, 'destination_disabled')); return true; }

    const prepared = this.prepare(destination);
    const urls = urlsToTry(task, prepared);
    const body = Buffer.from(task.body, 'utf8');
    const standard = standardSigning(destination, task.taskId, now);
    // One URL (the common case) without Promise.all and its arrays.
    const results = urls.length === 1
      ? [await this.attempt(task.destinationId, urls[0]!, body, prepared, destination.sharedSecret, standard)]
      : await Promise.all(urls.map((url) => this.attempt(task.destinationId, url, body, prepared, destination.sharedSecret, standard)));
    const verdict = combineUrlOutcomes(results);
    // Retry delays count from the end of the attempt (a timeout took 5 s), the deadline from its start.
    const ended = this.deps.clock();
    const tried: UrlAttempt[] = [];
    for (const { url, result, at, latencyMs } of results) {
      tried.push({
        urlIndex: prepared.index.get(url) ?? -1, at, latencyMs,
        status: result?.kind === 'response' ? result.status : null,
        error: result === undefined ? 'circuit_open' : result.kind === 'error' ? result.error : null,
      });
    }

    // Attempts every circuit refused made no request and say nothing new about the destination.
    if (verdict.verdict === 'accepted' || results.some((r) => r.result !== undefined)) this.deps.health?.attempted(task.destinationId, verdict.verdict === 'accepted');
    const notification = destination.type === 'notifications';
    if (verdict.verdict === 'accepted') {
      if (notification) metrics.notifications.inc({ outcome: 'delivered' });
      metrics.delivered.inc({ destination: task.destinationId });
      metrics.endToEndSeconds.observe(Math.max(0, ended - task.receivedAt) / 1000);
      this.record(task, tried, DELIVERED);
      return true;
    }
    if (mayFollowUp && !(await mayFollowUp())) {
      this.deps.logger.info({ taskId: task.taskId, destinationId: task.destinationId }, 'the task\'s partition moved to another member during the attempt: no follow-up record, the next owner sends it');
      return false;
    }
    const failure = lastFailure(results);
    if (notification) metrics.notifications.inc({ outcome: 'failed' });
    if (verdict.verdict === 'permanent') await this.deadLetter({ ...task, firstAttemptAt: task.firstAttemptAt ?? now }, ended, verdict.reason, failure, false, task, tried);
    else await this.retryLater({ ...task, firstAttemptAt: task.firstAttemptAt ?? now }, ended, verdict.retryUrls, failure, verdict.reason, verdict.retryAfterMs, tried);
    return true;
  }

  /**
   * Whether every URL this task would try refuses requests (its circuit open, or half-open with the
   * probe already out), so running it would make no request. Such a task is deferred without
   * waiting for one of its destination's request slots, which a hung destination's tasks would
   * otherwise hold while their retry records are written, filling its queue and pausing partitions
   * it shares with others (half-open with its probe hanging did so for the probe's 5 s).
   */
  circuitOpen(task: DeliveryTask): boolean {
    const destination = this.deps.config.destination(task.destinationId);
    if (!destination?.enabled) return false;
    const prepared = this.prepare(destination);
    for (const url of urlsToTry(task, prepared)) if (!this.deps.breaker.refuses(prepared.breakerKeys.get(url)!)) return false;
    return true;
  }

  /** circuitOpen for a task meant for every URL of the destination (a range's). */
  destinationRefuses(destinationId: string): boolean {
    const destination = this.deps.config.destination(destinationId);
    if (!destination?.enabled) return false;
    const prepared = this.prepare(destination);
    for (const key of prepared.breakerKeys.values()) if (!this.deps.breaker.refuses(key)) return false;
    return true;
  }

  /** A destination's rate limit (requests a second over every instance), if it is enabled and has one. */
  rateLimitOf(destinationId: string): number | undefined {
    const destination = this.deps.config.destination(destinationId);
    return destination?.enabled ? destination.rateLimit?.perSecond : undefined;
  }

  /**
   * Holds a task of a destination over its rate limit (docs/decisions/0018-destination-rate-limits.md):
   * written unchanged to the first tier, due after that tier's delay. No attempt is counted, no
   * tier advanced, nothing recorded as failed; its deadline (if an earlier attempt started one)
   * runs on as it would.
   */
  async hold(task: DeliveryTask): Promise<void> {
    this.deps.metrics.rateLimited.inc({ destination: task.destinationId, action: 'held' });
    this.deps.refusals?.rateLimited(task.destinationId);
    await this.write(this.deps.topics.retry(1), `${task.destinationId}:${task.userKey}`, this.deps.codec.encode('io.switchyard.pipeline.DeliveryTask', { ...task, notBefore: this.heldUntil() }));
  }

  /**
   * Holds a batch's run of never-attempted tasks over the rate limit as one range of attempt 0 (the
   * tasks stay in the delivery topic; resumedFromRange runs them as fan-out wrote them). Its
   * firstAttemptAt and deadline mean nothing: no attempt has been made.
   */
  private async holdRange(range: PendingRange): Promise<void> {
    const n = range.tasks.length;
    this.deps.metrics.rateLimited.inc({ destination: range.destinationId, action: 'held' }, n);
    this.deps.refusals?.rateLimited(range.destinationId);
    await this.writeRange(this.deps.topics.retry(1), {
      destinationId: range.destinationId, topic: range.topic, partition: range.partition, fromOffset: Number(range.from), toOffset: Number(range.to),
      tasks: n, attempt: 0, firstAttemptAt: 0, deadline: 0, notBefore: this.heldUntil(), lastError: 'rate_limited', heldOffsets: null,
    });
  }

  /** A range (of any attempt) whose run ran out of tokens: the rest is held as it is, due after the first tier's delay. */
  async holdRangeAgain(range: DeferredRange): Promise<void> {
    this.deps.metrics.rateLimited.inc({ destination: range.destinationId, action: 'held' }, range.tasks);
    this.deps.refusals?.rateLimited(range.destinationId);
    await this.writeRange(this.deps.topics.retry(1), { ...range, notBefore: this.heldUntil() });
  }

  /** A held range of the destination ran to its end with a token to spare (or no rate limit): fan-out may write its tasks again. */
  underLimit(destinationId: string): void {
    this.deps.refusals?.underLimit(destinationId);
  }

  /** When a held task is looked at again: the first tier's delay, so the tier stays in due order. */
  private heldUntil(): number {
    return this.deps.clock() + this.deps.policy.tiersMs[0]!;
  }

  /**
   * Defers the tasks of a range (deferred-ranges.ts) with one tier record instead of one per task:
   * they stay in the delivery topic, and the record says where. The trace gets one DeferralTrace
   * naming every message (the index shows each as a deferred attempt, as defer() would record it:
   * one DeliveryAttempt per task cost a tenth of the isolation bench's throughput); the failure log
   * nothing (no request failed: the requests that opened the circuit or stalled the destination
   * were logged). With a deadline that leaves no wait, each task goes its own way through defer().
   */
  async deferRange(range: PendingRange): Promise<void> {
    if (range.reasons[0] === 'rate_limited') return this.holdRange(range);
    const now = this.deps.clock();
    const applied = this.retryPolicyOf(range.destinationId);
    const decision = nextRetryUnder(applied, this.deps.policy.tiersMs, { attempt: 1, firstAttemptAt: now, now });
    if (decision.action === 'dead_letter') {
      // A range is all deferrals here (holds returned above).
      for (const [i, task] of range.tasks.entries()) { const reason = range.reasons[i]!; if (reason !== 'rate_limited') await this.defer(task, reason); }
      return;
    }
    const { metrics } = this.deps;
    const n = range.tasks.length;
    metrics.attempts.inc({ destination: range.destinationId, status_class: 'skipped' }, n);
    metrics.retries.inc({ tier: String(decision.tier), policy: applied.source }, n);
    metrics.deferredRanges.inc({ event: 'written' });
    const record: DeferredRange = {
      destinationId: range.destinationId, topic: range.topic, partition: range.partition, fromOffset: Number(range.from), toOffset: Number(range.to),
      tasks: n, attempt: 1, firstAttemptAt: now, deadline: now + applied.policy.deadlineMs, notBefore: decision.notBefore, lastError: range.reasons.at(-1)!,
      heldOffsets: null,
    };
    await this.writeRange(this.deps.topics.retry(decision.tier), record);
    if (range.reasons.includes('circuit_open')) this.reportRefusing(range.destinationId);
    this.deps.recordAttempt?.({
      destinationId: range.destinationId, sourceId: range.tasks[0]!.sourceId, messageIds: range.tasks.map((t) => t.messageId), error: record.lastError!,
      attempt: 1, at: now, nextTier: decision.tier, notBefore: decision.notBefore, retryPolicy: applied.source,
    });
  }

  /**
   * A range that fell due while its destination still refuses: deferred again as one record (its
   * tasks are not read, nor traced again). False once past its deadline: the caller then reads the
   * tasks and runs each, which dead-letters them.
   */
  async deferRangeAgain(range: DeferredRange, reason: string): Promise<boolean> {
    const now = this.deps.clock();
    const applied = this.retryPolicyOf(range.destinationId);
    // A range only held so far (attempt 0) is deferred for the first time: its deadline starts now.
    const firstAttemptAt = range.attempt === 0 ? now : range.firstAttemptAt;
    const decision = nextRetryUnder(applied, this.deps.policy.tiersMs, { attempt: range.attempt + 1, firstAttemptAt, now });
    if (decision.action === 'dead_letter') return false;
    this.deps.metrics.attempts.inc({ destination: range.destinationId, status_class: 'skipped' }, range.tasks);
    this.deps.metrics.retries.inc({ tier: String(decision.tier), policy: applied.source }, range.tasks);
    this.deps.metrics.deferredRanges.inc({ event: 'deferred_again' });
    await this.writeRange(this.deps.topics.retry(decision.tier), { ...range, attempt: range.attempt + 1, firstAttemptAt, deadline: range.attempt === 0 ? now + this.deps.policy.deadlineMs : range.deadline, notBefore: decision.notBefore, lastError: reason });
    if (reason === 'circuit_open') this.reportRefusing(range.destinationId);
    return true;
  }

  /**
   * What is left of a range whose run shutdown cut short, written back unchanged (attempt, deadline,
   * due time) to the tier topic it was read from: its key puts it in the same partition, behind the
   * record it replaces.
   */
  async deferRangeRest(tierTopic: string, rest: DeferredRange): Promise<void> {
    this.deps.metrics.deferredRanges.inc({ event: 'rest_written' });
    await this.writeRange(tierTopic, rest);
  }

  private writeRange(topic: string, record: DeferredRange): Promise<void> {
    return this.write(topic, `${record.destinationId}:range:${record.partition}`, this.deps.codec.encode('io.switchyard.pipeline.DeferredRange', record));
  }

  /**
   * Sends a task to the retry tier without a request: its destination is failing and already has a
   * full queue (`overloaded`), or every URL's circuit is open (`circuit_open`). It counts as a
   * failed attempt, so tiers and the deadline apply as usual.
   */
  defer(task: DeliveryTask, reason: 'overloaded' | 'circuit_open'): Promise<void> {
    this.deps.metrics.attempts.inc({ destination: task.destinationId, status_class: 'skipped' });
    if (reason === 'circuit_open') this.reportRefusing(task.destinationId);
    const now = this.deps.clock();
    return this.retryLater(task, now, task.pendingUrls, { status: null, excerpt: null, error: reason }, reason, undefined, [{ urlIndex: -1, at: now, latencyMs: 0, status: null, error: reason }], 'deferred');
  }

  private async retryLater(task: DeliveryTask, now: number, retryUrls: string[] | null, failure: Failure, reason: string, retryAfterMs: number | undefined, tried: UrlAttempt[], outcome: 'retry_scheduled' | 'deferred' = 'retry_scheduled'): Promise<void> {
    const firstAttemptAt = task.firstAttemptAt ?? now;
    // The destination's policy as configured now: a change applies to the tasks already waiting.
    const applied = this.retryPolicyOf(task.destinationId);
    const decision = nextRetryUnder(applied, this.deps.policy.tiersMs, { attempt: task.attempt + 1, firstAttemptAt, now, retryAfterMs });
    const next: DeliveryTask = {
      ...task, attempt: task.attempt + 1, firstAttemptAt, deadline: firstAttemptAt + applied.policy.deadlineMs,
      pendingUrls: retryUrls, lastStatus: failure.status, lastError: failure.error ?? reason,
    };
    if (decision.action === 'dead_letter') return this.deadLetter(next, now, 'deadline', failure, true, task, tried);
    this.deps.metrics.retries.inc({ tier: String(decision.tier), policy: applied.source });
    await this.write(this.deps.topics.retry(decision.tier), `${task.destinationId}:${task.userKey}`, this.deps.codec.encode('io.switchyard.pipeline.DeliveryTask', { ...next, notBefore: decision.notBefore }));
    this.record(task, tried, { outcome, nextTier: decision.tier, notBefore: decision.notBefore, deadLetterReason: null, retryStep: decision.step });
  }

  private async attempt(destinationId: string, url: string, body: Buffer, prepared: PreparedDestination, sharedSecret: string | null, standard: StandardSigning | undefined): Promise<UrlOutcome & { result: AttemptResult | undefined; at: number; latencyMs: number }> {
    const { breaker, client, metrics } = this.deps;
    const key = prepared.breakerKeys.get(url)!;
    const at = this.deps.clock();
    if (!breaker.allow(key)) {
      // The endpoint keeps timing out: no request, the task waits in the retry tier instead of a slot.
      metrics.attempts.inc({ destination: destinationId, status_class: 'skipped' });
      return { url, outcome: { verdict: 'retry', reason: 'circuit_open' }, result: undefined, at, latencyMs: 0 };
    }
    const start = performance.now();
    const certificate = prepared.certificates.get(url);
    const result = await client.post({
      url, body, headers: prepared.headers.get(url)!, sharedSecret, ...(standard ? { standard } : {}),
      ...(certificate ? { clientCertificate: { destinationId, certificate } } : {}),
    });
    const latencyMs = performance.now() - start;
    metrics.requestSeconds.observe({ destination: destinationId }, latencyMs / 1000);
    const answered = !isBreakerFailure(result);
    breaker.record(key, answered);
    if (answered) this.deps.refusals?.answered(destinationId);
    metrics.attempts.inc({ destination: destinationId, status_class: statusClass(result) });
    this.breakerGauge(destinationId, breaker.state(key) === 'closed' ? 0 : 1);
    return { url, outcome: classifyAttempt(result), result, at, latencyMs };
  }

  /** Tells fan-out the destination refuses, if every circuit of its URLs is open (the publisher asks only when a report is due). */
  private reportRefusing(destinationId: string): void {
    this.deps.refusals?.refusing(destinationId, () => this.destinationRefuses(destinationId));
  }

  /** delivery_breaker_open is set when its value changes (it was set after every request). */
  private breakerGauge(destinationId: string, value: 0 | 1): void {
    if (this.breakerShown.get(destinationId) === value) return;
    if (this.breakerShown.size >= 10_000) this.breakerShown.clear();
    this.breakerShown.set(destinationId, value);
    this.deps.metrics.breakerOpen.set({ destination: destinationId }, value);
  }

  /** The retry policy a destination's tasks follow: its own, or the deployment's. */
  private retryPolicyOf(destinationId: string): AppliedRetryPolicy {
    return appliedRetryPolicy(this.deps.config.destination(destinationId), this.deps.policy);
  }

  private prepare(destination: Destination): PreparedDestination {
    let p = this.prepared.get(destination);
    if (!p) this.prepared.set(destination, (p = prepareDestination(destination)));
    return p;
  }

  /** Logs the attempt's failed requests and hands its records to the recorder; neither can fail delivery. */
  private record(task: DeliveryTask, tried: UrlAttempt[], outcome: AttemptOutcome): void {
    const failures = this.deps.failures;
    if (failures) {
      for (const a of tried) {
        if (a.status !== null && a.status >= 200 && a.status <= 299) continue;
        failures.record({
          destinationId: task.destinationId, taskId: task.taskId, messageId: task.messageId, urlIndex: a.urlIndex, attempt: task.attempt + 1,
          outcome: outcome.outcome, status: a.status, error: a.error, nextAttemptAt: outcome.notBefore, deadLetterReason: outcome.deadLetterReason,
        });
      }
    }
    const recordAttempt = this.deps.recordAttempt;
    if (!recordAttempt) return;
    try {
      const applied = this.retryPolicyOf(task.destinationId);
      for (const r of attemptRecords(task, tierOf(task, applied, this.deps.policy.tiersMs), applied.source, tried, outcome)) recordAttempt(r);
    } catch (err) {
      this.deps.logger.warn({ err, taskId: task.taskId }, 'recording a delivery attempt failed');
    }
  }

  /** `original` is the task as read (attempt number and tier of the records), `tried` what this attempt did. */
  private async deadLetter(task: DeliveryTask, now: number, reason: DeadLetterReason, failure: Failure, alreadyCounted: boolean, original: DeliveryTask, tried: UrlAttempt[]): Promise<void> {
    this.deps.metrics.deadLetters.inc({ reason });
    const final: DeliveryTask = alreadyCounted ? task : {
      ...task, attempt: task.attempt + 1, firstAttemptAt: task.firstAttemptAt ?? now, lastStatus: failure.status, lastError: failure.error,
    };
    const record: DeadLetter = { reason, status: failure.status, responseExcerpt: failure.excerpt, error: failure.error, failedAt: now, task: final };
    this.deps.logger.info({ taskId: task.taskId, destinationId: task.destinationId, reason, status: failure.status }, 'dead-lettered');
    await this.write(this.deps.topics.deadLetter, task.taskId, this.deps.codec.encode('io.switchyard.pipeline.DeadLetter', record));
    this.record(original, tried, { outcome: 'dead_lettered', nextTier: null, notBefore: null, deadLetterReason: reason, retryStep: null });
  }

  /** Writes a follow-up record, retrying until Kafka takes it (or shutdown, leaving the task uncommitted). */
  private async write(topic: string, key: string, value: Buffer): Promise<void> {
    for (let delay = 200; ; delay = Math.min(delay * 2, 10_000)) {
      try {
        await this.deps.producer.submit([{ topic, key, value }]).acked;
        return;
      } catch (err) {
        if (this.deps.stopping()) throw err;
        this.deps.logger.warn({ err, topic }, 'writing a follow-up record failed; retrying');
        await new Promise((r) => setTimeout(r, delay));
      }
    }
  }
}

/** The trace record of an attempt that made no request. */
function noRequest(at: number, error: string): UrlAttempt[] {
  return [{ urlIndex: -1, at, latencyMs: 0, status: null, error }];
}

const DELIVERED: AttemptOutcome = { outcome: 'delivered', nextTier: null, notBefore: null, deadLetterReason: null, retryStep: null };

/** The most informative failure for the records: a response beats an error; the last one wins. */
function lastFailure(attempts: ReadonlyArray<{ result: AttemptResult | undefined }>): Failure {
  let failure: Failure = { status: null, excerpt: null, error: null };
  for (const { result: r } of attempts) {
    if (!r) { failure = failure.status === null && failure.error === null ? { status: null, excerpt: null, error: 'circuit_open' } : failure; continue; }
    if (r.kind === 'response' && (r.status < 200 || r.status >= 300)) failure = { status: r.status, excerpt: r.bodyExcerpt || null, error: null };
    else if (r.kind === 'error' && failure.status === null) failure = { status: null, excerpt: null, error: `${r.error}: ${r.message}` };
  }
  return failure;
}
