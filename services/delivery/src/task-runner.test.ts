import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ConfigState, Destination } from '@switchyard/platform/config-view/config-state';
import type { TopicNames } from '@switchyard/platform/kafka/topics';
import { DEFAULT_RETRY_POLICY } from '@switchyard/platform/retry-schedule';
import type { DeferralTrace, DeliveryAttempt, DeliveryTask } from '@switchyard/platform/schemas/generated';
import { CircuitBreaker } from './circuit-breaker.js';
import { TaskRunner, type TaskRunnerDeps } from './task-runner.js';

const task = (over: Partial<DeliveryTask> = {}): DeliveryTask => ({
  taskId: 'm:d', messageId: 'm', sourceId: 's', destinationId: 'd', eventType: 'track', userKey: 'u', body: '{}', receivedAt: 1000, createdAt: 1001,
  attempt: 0, firstAttemptAt: null, deadline: null, notBefore: null, pendingUrls: null, lastStatus: null, lastError: null, ...over,
});

const destination = (urls: string[], enabled = true): Destination => ({
  id: 'd', sourceId: 's', name: 'hooks', type: 'webhooks', enabled, sharedSecret: null, webhooks: urls.map((url) => ({ url, headers: {}, clientCertificate: null })), createdAt: 0, updatedAt: 0, filter: null, standardSignatures: false, rateLimit: null, signingSecrets: [], retry: null, disabledReason: null, disabledAt: null, notificationTypes: [],
});

/** A runner whose only collaborators used by circuitOpen are the configuration and the breaker. */
function runner(dest: Destination | undefined, breaker: CircuitBreaker): TaskRunner {
  const config = { destination: (id: string) => (id === dest?.id ? dest : undefined) } as unknown as ConfigState;
  return new TaskRunner({ config, breaker } as unknown as TaskRunnerDeps);
}

describe('TaskRunner.circuitOpen: a task that would make no request', () => {
  const A = 'https://a.example.com/in';
  const B = 'https://b.example.com/in';
  const open = (clock: { now: number }, ...urls: string[]) => {
    const breaker = new CircuitBreaker({ failureThreshold: 1, openMs: 1000, now: () => clock.now });
    for (const url of urls) breaker.record(new URL(url).origin, false);
    return breaker;
  };

  it('is true only when every URL the task would try has an open circuit', () => {
    const clock = { now: 0 };
    assert.equal(runner(destination([A, B]), open(clock, A)).circuitOpen(task()), false);
    assert.equal(runner(destination([A, B]), open(clock, A, B)).circuitOpen(task()), true);
    assert.equal(runner(destination([A]), open(clock)).circuitOpen(task()), false);
  });

  it('looks only at the URLs still pending, and at every URL once none of those is left', () => {
    const clock = { now: 0 };
    const breaker = open(clock, A);
    assert.equal(runner(destination([A, B]), breaker).circuitOpen(task({ pendingUrls: [A] })), true);
    assert.equal(runner(destination([A, B]), breaker).circuitOpen(task({ pendingUrls: [B] })), false);
    assert.equal(runner(destination([A, B]), breaker).circuitOpen(task({ pendingUrls: ['https://removed.example.com/'] })), false);
  });

  it('is false once a probe may be due (half-open), and for a missing or disabled destination (the runner dead-letters those)', () => {
    const clock = { now: 0 };
    const breaker = open(clock, A);
    clock.now = 1000;
    assert.equal(runner(destination([A]), breaker).circuitOpen(task()), false);
    assert.equal(runner(undefined, open(clock, A)).circuitOpen(task()), false);
    assert.equal(runner(destination([A], false), open(clock, A)).circuitOpen(task()), false);
  });
});

describe('TaskRunner: the retry policy a destination carries', () => {
  const T0 = 1_700_000_000_000;
  const topics = { retry: (n: number) => `retry.${n}`, deadLetter: 'dead-letter' } as unknown as TopicNames;
  const counter = { inc: () => {} };
  /** A runner that writes to memory: each record as [topic, decoded value], each trace record kept. */
  function recording(dest: Destination) {
    const written: Array<[string, Record<string, unknown>]> = [];
    const traced: Array<DeliveryAttempt | DeferralTrace> = [];
    const deps = {
      config: { destination: (id: string) => (id === dest.id ? dest : undefined) } as unknown as ConfigState,
      policy: DEFAULT_RETRY_POLICY,
      codec: { encode: (_name: string, value: unknown) => Buffer.from(JSON.stringify(value)) },
      producer: { submit: (records: Array<{ topic: string; value: Buffer }>) => { for (const r of records) written.push([r.topic, JSON.parse(r.value.toString())]); return { acked: Promise.resolve() }; } },
      topics, metrics: { attempts: counter, retries: counter, deadLetters: counter }, logger: { info: () => {}, warn: () => {} },
      clock: () => T0, stopping: () => false, recordAttempt: (r: DeliveryAttempt | DeferralTrace) => traced.push(r),
    };
    return { runner: new TaskRunner(deps as unknown as TaskRunnerDeps), written, traced };
  }

  it('its own tiers and deadline: the wait goes to the tier topic that covers it, the trace names the destination policy', async () => {
    const own = { ...destination(['https://a.example.com/in']), retry: { tiersMs: [30_000, 300_000], deadlineMs: 3_600_000 } };
    const { runner: r, written, traced } = recording(own);
    await r.defer(task({ destinationId: 'd', attempt: 1, firstAttemptAt: T0 - 60_000 }), 'overloaded');
    const [topic, next] = written[0] as unknown as [string, DeliveryTask];
    assert.equal(topic, 'retry.3', 'the 5 min wait (step 2) in the 10 min topic');
    assert.deepEqual([next.attempt, next.notBefore, next.deadline], [2, T0 + 300_000, T0 - 60_000 + 3_600_000]);
    assert.deepEqual(traced.map((t) => [(t as DeliveryAttempt).tier, (t as DeliveryAttempt).retryPolicy, (t as DeliveryAttempt).retryStep, (t as DeliveryAttempt).nextTier]), [[2, 'destination', 2, 3]]);
  });

  it('past its own deadline: dead-lettered (deadline), though the deployment\'s 4 h would still allow a retry', async () => {
    const own = { ...destination(['https://a.example.com/in']), retry: { tiersMs: [30_000], deadlineMs: 60_000 } };
    const { runner: r, written } = recording(own);
    await r.defer(task({ destinationId: 'd', attempt: 3, firstAttemptAt: T0 - 60_000 }), 'overloaded');
    assert.deepEqual(written.map(([t, v]) => [t, v.reason]), [['dead-letter', 'deadline']]);
  });

  it('without one: the deployment\'s schedule, named default', async () => {
    const { runner: r, written, traced } = recording(destination(['https://a.example.com/in']));
    await r.defer(task({ destinationId: 'd', attempt: 1, firstAttemptAt: T0 - 60_000 }), 'overloaded');
    assert.deepEqual(written.map(([t, v]) => [t, v.notBefore]), [['retry.2', T0 + 60_000]]);
    assert.deepEqual(traced.map((t) => [(t as DeliveryAttempt).tier, (t as DeliveryAttempt).retryPolicy, (t as DeliveryAttempt).retryStep]), [[1, 'default', 2]]);
  });
});
