import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { AppliedRetryPolicy } from './destination-retry.js';
import { DEFAULT_RETRY_POLICY, nextRetry, nextRetryUnder, tierReadFrom, topicFor, type ScheduledRetry } from './retry-schedule.js';

const S = 1_000;
const M = 60 * S;
const H = 60 * M;
const t0 = Date.parse('2026-11-22T12:00:00.000Z');
const topics = DEFAULT_RETRY_POLICY.tiersMs; // 10 s, 1 min, 10 min, 1 h
const byDefault: AppliedRetryPolicy = { source: 'default', policy: DEFAULT_RETRY_POLICY };
const own = (tiersMs: number[], deadlineMs: number): AppliedRetryPolicy => ({ source: 'destination', policy: { tiersMs, deadlineMs } });

describe('topicFor: the first tier topic whose delay covers a wait', () => {
  const cases: Array<[number, number]> = [[10 * S, 1], [30 * S, 2], [1 * M, 2], [5 * M, 3], [10 * M, 3], [11 * M, 4], [1 * H, 4], [2 * H, 4], [1 * S, 1]];
  for (const [delay, tier] of cases) it(`${delay / S} s → tier ${tier}`, () => assert.equal(topicFor(delay, topics), tier));
});

describe('nextRetryUnder: the default policy is nextRetry', () => {
  for (const attempt of [1, 2, 3, 4, 7]) {
    it(`attempt ${attempt}`, () => {
      const args = { attempt, firstAttemptAt: t0, now: t0 + attempt * M, retryAfterMs: attempt === 2 ? 5 * M : undefined };
      const plain = nextRetry(DEFAULT_RETRY_POLICY, args);
      assert.deepEqual(nextRetryUnder(byDefault, topics, args), plain.action === 'retry' ? { ...plain, step: plain.tier } : plain);
    });
  }
});

describe('nextRetryUnder: a destination policy', () => {
  const policy = own([30 * S, 5 * M, 1 * H], 2 * H);
  const cases: Array<[string, { attempt: number; now: number; retryAfterMs?: number }, ScheduledRetry]> = [
    ['attempt 1 waits its own 30 s, in the 1 min topic', { attempt: 1, now: t0 }, { action: 'retry', tier: 2, step: 1, notBefore: t0 + 30 * S }],
    ['attempt 2 waits 5 min, in the 10 min topic', { attempt: 2, now: t0 + 30 * S }, { action: 'retry', tier: 3, step: 2, notBefore: t0 + 330 * S }],
    ['attempt 3 waits 1 h, in the 1 h topic', { attempt: 3, now: t0 + 6 * M }, { action: 'retry', tier: 4, step: 3, notBefore: t0 + 66 * M }],
    ['the last tier repeats', { attempt: 5, now: t0 + 10 * M }, { action: 'retry', tier: 4, step: 3, notBefore: t0 + 70 * M }],
    ['its own deadline cuts the wait short', { attempt: 4, now: t0 + 90 * M }, { action: 'retry', tier: 4, step: 3, notBefore: t0 + 2 * H }],
    ['its own deadline dead-letters (2 h, not 4 h)', { attempt: 5, now: t0 + 2 * H }, { action: 'dead_letter', reason: 'deadline' }],
    ['Retry-After shorter than its tier → its tier', { attempt: 1, now: t0, retryAfterMs: 5 * S }, { action: 'retry', tier: 2, step: 1, notBefore: t0 + 30 * S }],
    ['Retry-After up to the topic\'s next delay → honoured', { attempt: 1, now: t0, retryAfterMs: 4 * M }, { action: 'retry', tier: 2, step: 1, notBefore: t0 + 4 * M }],
    ['Retry-After up to its next tier, never past the next topic\'s delay', { attempt: 1, now: t0, retryAfterMs: 1 * H }, { action: 'retry', tier: 2, step: 1, notBefore: t0 + 5 * M }],
    ['Retry-After on its last tier → its own delay', { attempt: 3, now: t0, retryAfterMs: 3 * H }, { action: 'retry', tier: 4, step: 3, notBefore: t0 + 1 * H }],
  ];
  for (const [name, args, expected] of cases) it(name, () => assert.deepEqual(nextRetryUnder(policy, topics, { ...args, firstAttemptAt: t0 }), expected));

  it('a next tier far above the topic caps Retry-After at the next topic\'s delay', () => {
    assert.deepEqual(nextRetryUnder(own([10 * S, 1 * H], 4 * H), topics, { attempt: 1, firstAttemptAt: t0, now: t0, retryAfterMs: 1 * H }), { action: 'retry', tier: 1, step: 1, notBefore: t0 + 1 * M });
  });

  it('a delay longer than the longest topic (the deployment\'s tiers shrank) is brought down to it', () => {
    assert.deepEqual(nextRetryUnder(own([2 * H], 24 * H), topics, { attempt: 1, firstAttemptAt: t0, now: t0 }), { action: 'retry', tier: 4, step: 1, notBefore: t0 + 1 * H });
  });

  it('failing forever under 1 s, 2 s and a 5 s deadline on 500 ms, 1 s, 2 s topics: tries at 0, 1, 3, 5 s, then dead-letters', () => {
    const small = own([1 * S, 2 * S], 5 * S);
    const smallTopics = [500, 1 * S, 2 * S];
    const tries = [t0];
    const tiers: number[] = [];
    let decision: ScheduledRetry;
    for (let attempt = 1; ; attempt++) {
      decision = nextRetryUnder(small, smallTopics, { attempt, firstAttemptAt: t0, now: tries.at(-1)! });
      if (decision.action === 'dead_letter') break;
      tries.push(decision.notBefore);
      tiers.push(decision.tier);
    }
    assert.deepEqual(tries.map((t) => (t - t0) / S), [0, 1, 3, 5]);
    assert.deepEqual(tiers, [2, 3, 3]);
  });
});

describe('tierReadFrom: the topic a task was read from, for the trace', () => {
  it('the default policy: min(attempt, tiers); 0 for the delivery topic', () => {
    assert.deepEqual([0, 1, 2, 4, 9].map((a) => tierReadFrom(byDefault, topics, a)), [0, 1, 2, 4, 4]);
  });
  it('a destination policy: the topic its step\'s delay went to', () => {
    assert.deepEqual([0, 1, 2, 3, 9].map((a) => tierReadFrom(own([30 * S, 5 * M, 1 * H], 4 * H), topics, a)), [0, 2, 3, 4, 4]);
  });
});
