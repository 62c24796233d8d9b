import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { AppliedRetryPolicy } from '@switchyard/platform/destination-retry';
import { DEFAULT_RETRY_POLICY } from '@switchyard/platform/retry-schedule';
import type { DeliveryTask } from '@switchyard/platform/schemas/generated';
import { attemptRecords, tierOf } from './task-runner.js';

const task = (over: Partial<DeliveryTask> = {}): DeliveryTask => ({
  taskId: 'm:d', messageId: 'm', sourceId: 's', destinationId: 'd', eventType: 'track', userKey: 'u', body: '{}', receivedAt: 1000, createdAt: 1001,
  attempt: 0, firstAttemptAt: null, deadline: null, notBefore: null, pendingUrls: null, lastStatus: null, lastError: null, ...over,
});

describe('attempt records: what delivery writes to the delivery-attempts topic', () => {
  const topics = DEFAULT_RETRY_POLICY.tiersMs;
  const byDefault: AppliedRetryPolicy = { source: 'default', policy: DEFAULT_RETRY_POLICY };

  it('the tier a task was read from follows its attempt count (the last tier repeats)', () => {
    assert.deepEqual([0, 1, 2, 3, 4, 9].map((attempt) => tierOf(task({ attempt }), byDefault, topics)), [0, 1, 2, 3, 4, 4]);
  });

  it('under a destination policy, the tier is the topic its wait was placed in', () => {
    const own: AppliedRetryPolicy = { source: 'destination', policy: { tiersMs: [30_000, 300_000], deadlineMs: 3_600_000 } };
    assert.deepEqual([0, 1, 2, 5].map((attempt) => tierOf(task({ attempt }), own, topics)), [0, 2, 3, 3]);
  });

  it('one record per URL tried, numbered from 1, carrying the task outcome and the policy', () => {
    const records = attemptRecords(task({ attempt: 1 }), 1, 'destination', [
      { urlIndex: 0, at: 2000, latencyMs: 12.6, status: 503, error: null },
      { urlIndex: 2, at: 2001, latencyMs: 5000, status: null, error: 'timeout' },
    ], { outcome: 'retry_scheduled', nextTier: 2, notBefore: 9000, deadLetterReason: null, retryStep: 2 });
    assert.deepEqual(records.map((r) => [r.urlIndex, r.attempt, r.tier, r.status, r.error, r.latencyMs, r.outcome, r.nextTier, r.notBefore, r.receivedAt, r.messageId, r.retryPolicy, r.retryStep]), [
      [0, 2, 1, 503, null, 13, 'retry_scheduled', 2, 9000, 1000, 'm', 'destination', 2],
      [2, 2, 1, null, 'timeout', 5000, 'retry_scheduled', 2, 9000, 1000, 'm', 'destination', 2],
    ]);
  });
});
