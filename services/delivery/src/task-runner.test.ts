import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ConfigState, Destination } from '@switchyard/platform/config-view/config-state';
import type { DeliveryTask } from '@switchyard/platform/schemas/generated';
import { CircuitBreaker } from './circuit-breaker.js';
import { TaskRunner, type TaskRunnerDeps } from './task-runner.js';

const task = (over: Partial<DeliveryTask> = {}): DeliveryTask => ({
  taskId: 'm:d', messageId: 'm', sourceId: 's', destinationId: 'd', eventType: 'track', userKey: 'u', body: '{}', receivedAt: 1000, createdAt: 1001,
  attempt: 0, firstAttemptAt: null, deadline: null, notBefore: null, pendingUrls: null, lastStatus: null, lastError: null, ...over,
});

const destination = (urls: string[], enabled = true): Destination => ({
  id: 'd', sourceId: 's', name: 'hooks', type: 'webhooks', enabled, sharedSecret: null, webhooks: urls.map((url) => ({ url, headers: {}, clientCertificate: null })), createdAt: 0, updatedAt: 0, filter: null, standardSignatures: false, signingSecrets: [],
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
