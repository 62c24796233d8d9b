import type { AvroCodec } from '@switchyard/platform/codec/avro-codec';
import type { ConfigState } from '@switchyard/platform/config-view/config-state';
import type { BatchingProducer } from '@switchyard/platform/kafka/batching-producer';
import type { TopicNames } from '@switchyard/platform/kafka/topics';
import type { Logger } from '@switchyard/platform/logger';
import type { DeadLetter, DeliveryAttempt, DeliveryTask } from '@switchyard/platform/schemas/generated';
import { breakerKey, isBreakerFailure, type CircuitBreaker } from './circuit-breaker.js';
import { statusClass, type DeliveryMetrics } from './delivery-metrics.js';
import type { FailedAttemptLog } from './failed-attempt-log.js';
import { combineUrlOutcomes, type UrlOutcome } from './multi-url.js';
import { classifyAttempt, type AttemptResult, type DeadLetterReason } from './outcome.js';
import { nextRetry, type RetryPolicy } from './retry-schedule.js';
import { standardSigning, type StandardSigning } from './standard-signing.js';
import type { WebhookClient } from './webhook-client.js';

export interface TaskRunnerDeps {
  config: ConfigState;
  client: WebhookClient;
  breaker: CircuitBreaker;
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
  recordAttempt?: (attempt: DeliveryAttempt) => void;
  /** Logs failed requests, rate-limited per destination. */
  failures?: FailedAttemptLog;
}

interface Failure { status: number | null; excerpt: string | null; error: string | null }

/** One request of an attempt as the trace shows it; urlIndex -1 when no request was made. */
export interface UrlAttempt { urlIndex: number; at: number; latencyMs: number; status: number | null; error: string | null }

type AttemptOutcome = Pick<DeliveryAttempt, 'outcome' | 'nextTier' | 'notBefore' | 'deadLetterReason'>;

/** The tier a task was read from: attempt n waits in tier min(n, tiers) (retry-schedule.ts); 0 is the delivery topic. */
export function tierOf(task: DeliveryTask, tiers: number): number {
  return Math.min(Math.max(0, task.attempt), tiers);
}

/** The trace records of one attempt of a task: one per URL tried, all carrying the task's outcome. */
export function attemptRecords(task: DeliveryTask, tiers: number, attempts: UrlAttempt[], outcome: AttemptOutcome): DeliveryAttempt[] {
  return attempts.map((a) => ({
    messageId: task.messageId, taskId: task.taskId, sourceId: task.sourceId, destinationId: task.destinationId, eventType: task.eventType,
    urlIndex: a.urlIndex, attempt: task.attempt + 1, tier: tierOf(task, tiers), status: a.status, error: a.error,
    latencyMs: Math.max(0, Math.round(a.latencyMs)), at: a.at, receivedAt: task.receivedAt, ...outcome,
  }));
}

/**
 * One attempt of one delivery task, and what follows from it: POST to every eligible URL at once,
 * then either done (a URL accepted), or the task goes to its next retry tier carrying the URLs
 * still worth trying, or to the dead-letter topic with the reason. Resolves only once that outcome
 * is durable in Kafka, so the caller may then let the task's offset be committed.
 */
export class TaskRunner {
  constructor(private readonly deps: TaskRunnerDeps) {}

  async run(task: DeliveryTask): Promise<void> {
    const { config, metrics } = this.deps;
    const now = this.deps.clock();
    const destination = config.destination(task.destinationId);
    const noRequest = (error: string): UrlAttempt[] => [{ urlIndex: -1, at: now, latencyMs: 0, status: null, error }];
    if (!destination) return this.deadLetter(task, now, 'destination_removed', { status: null, excerpt: null, error: 'the destination was deleted' }, false, task, noRequest('destination_removed'));
    if (!destination.enabled) return this.deadLetter(task, now, 'destination_disabled', { status: null, excerpt: null, error: 'the destination is disabled' }, false, task, noRequest('destination_disabled'));

    const headersByUrl = new Map(destination.webhooks.map((w) => [w.url, w.headers]));
    const urls = urlsToTry(task, destination.webhooks);
    const body = Buffer.from(task.body, 'utf8');

    const urlIndex = new Map(destination.webhooks.map((w, i) => [w.url, i]));
    const standard = standardSigning(destination, task.taskId, now);
    const results = await Promise.all(urls.map((url) => this.attempt(task.destinationId, url, body, headersByUrl.get(url) ?? {}, destination.sharedSecret, standard)));
    const verdict = combineUrlOutcomes(results.map(({ url, outcome }) => ({ url, outcome })));
    const failure = lastFailure(results.map((r) => r.result));
    // Retry delays count from the end of the attempt (a timeout took 5 s), the deadline from its start.
    const ended = this.deps.clock();
    const tried: UrlAttempt[] = results.map(({ url, result, at, latencyMs }) => ({
      urlIndex: urlIndex.get(url) ?? -1, at, latencyMs,
      status: result?.kind === 'response' ? result.status : null,
      error: result === undefined ? 'circuit_open' : result.kind === 'error' ? result.error : null,
    }));

    if (verdict.verdict === 'accepted') {
      metrics.delivered.inc({ destination: task.destinationId });
      metrics.endToEndSeconds.observe(Math.max(0, ended - task.receivedAt) / 1000);
      this.record(task, tried, { outcome: 'delivered', nextTier: null, notBefore: null, deadLetterReason: null });
      return;
    }
    if (verdict.verdict === 'permanent') return this.deadLetter({ ...task, firstAttemptAt: task.firstAttemptAt ?? now }, ended, verdict.reason, failure, false, task, tried);

    return this.retryLater({ ...task, firstAttemptAt: task.firstAttemptAt ?? now }, ended, verdict.retryUrls, failure, verdict.reason, verdict.retryAfterMs, tried);
  }

  /**
   * Whether every URL this task would try has an open circuit (not half-open: a probe may be due),
   * so running it would make no request. Such a task is deferred without waiting for one of its
   * destination's request slots, which a hung destination's tasks would otherwise hold while their
   * retry records are written, filling its queue and pausing partitions it shares with others.
   */
  circuitOpen(task: DeliveryTask): boolean {
    const destination = this.deps.config.destination(task.destinationId);
    if (!destination?.enabled) return false;
    return urlsToTry(task, destination.webhooks).every((url) => this.deps.breaker.state(breakerKey(url)) === 'open');
  }

  /**
   * Sends a task to the retry tier without a request: its destination is failing and already has a
   * full queue (`overloaded`), or every URL's circuit is open (`circuit_open`). It counts as a
   * failed attempt, so tiers and the deadline apply as usual.
   */
  defer(task: DeliveryTask, reason: 'overloaded' | 'circuit_open'): Promise<void> {
    this.deps.metrics.attempts.inc({ destination: task.destinationId, status_class: 'skipped' });
    const now = this.deps.clock();
    return this.retryLater(task, now, task.pendingUrls, { status: null, excerpt: null, error: reason }, reason, undefined, [{ urlIndex: -1, at: now, latencyMs: 0, status: null, error: reason }], 'deferred');
  }

  private async retryLater(task: DeliveryTask, now: number, retryUrls: string[] | null, failure: Failure, reason: string, retryAfterMs: number | undefined, tried: UrlAttempt[], outcome: 'retry_scheduled' | 'deferred' = 'retry_scheduled'): Promise<void> {
    const firstAttemptAt = task.firstAttemptAt ?? now;
    const decision = nextRetry(this.deps.policy, { attempt: task.attempt + 1, firstAttemptAt, now, retryAfterMs });
    const next: DeliveryTask = {
      ...task, attempt: task.attempt + 1, firstAttemptAt, deadline: firstAttemptAt + this.deps.policy.deadlineMs,
      pendingUrls: retryUrls, lastStatus: failure.status, lastError: failure.error ?? reason,
    };
    if (decision.action === 'dead_letter') return this.deadLetter(next, now, 'deadline', failure, true, task, tried);
    this.deps.metrics.retries.inc({ tier: String(decision.tier) });
    await this.write(this.deps.topics.retry(decision.tier), `${task.destinationId}:${task.userKey}`, this.deps.codec.encode('io.switchyard.pipeline.DeliveryTask', { ...next, notBefore: decision.notBefore }));
    this.record(task, tried, { outcome, nextTier: decision.tier, notBefore: decision.notBefore, deadLetterReason: null });
  }

  private async attempt(destinationId: string, url: string, body: Buffer, headers: Record<string, string>, sharedSecret: string | null, standard: StandardSigning | undefined): Promise<UrlOutcome & { result: AttemptResult | undefined; at: number; latencyMs: number }> {
    const { breaker, client, metrics } = this.deps;
    const key = breakerKey(url);
    const at = this.deps.clock();
    if (!breaker.allow(key)) {
      // The endpoint keeps timing out: no request, the task waits in the retry tier instead of a slot.
      metrics.attempts.inc({ destination: destinationId, status_class: 'skipped' });
      return { url, outcome: { verdict: 'retry', reason: 'circuit_open' }, result: undefined, at, latencyMs: 0 };
    }
    const end = metrics.requestSeconds.startTimer({ destination: destinationId });
    const result = await client.post({ url, body, headers, sharedSecret, ...(standard ? { standard } : {}) });
    const latencyMs = end() * 1000;
    breaker.record(key, !isBreakerFailure(result));
    metrics.attempts.inc({ destination: destinationId, status_class: statusClass(result) });
    metrics.breakerOpen.set({ destination: destinationId }, breaker.state(key) === 'closed' ? 0 : 1);
    return { url, outcome: classifyAttempt(result), result, at, latencyMs };
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
      for (const r of attemptRecords(task, this.deps.policy.tiersMs.length, tried, outcome)) recordAttempt(r);
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
    this.record(original, tried, { outcome: 'dead_lettered', nextTier: null, notBefore: null, deadLetterReason: reason });
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

/** The URLs an attempt tries: those still pending, less any removed from the destination since (all, if none is left). */
function urlsToTry(task: DeliveryTask, webhooks: ReadonlyArray<{ url: string }>): string[] {
  const current = new Set(webhooks.map((w) => w.url));
  const urls = (task.pendingUrls ?? [...current]).filter((u) => current.has(u));
  return urls.length > 0 ? urls : [...current];
}

/** The most informative failure for the records: a response beats an error; the last one wins. */
function lastFailure(results: Array<AttemptResult | undefined>): Failure {
  let failure: Failure = { status: null, excerpt: null, error: null };
  for (const r of results) {
    if (!r) { failure = failure.status === null && failure.error === null ? { status: null, excerpt: null, error: 'circuit_open' } : failure; continue; }
    if (r.kind === 'response' && (r.status < 200 || r.status >= 300)) failure = { status: r.status, excerpt: r.bodyExcerpt || null, error: null };
    else if (r.kind === 'error' && failure.status === null) failure = { status: null, excerpt: null, error: `${r.error}: ${r.message}` };
  }
  return failure;
}
