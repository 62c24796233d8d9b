import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DEFAULT_RETRY_POLICY, nextRetry, validateRetryPolicy, type RetryDecision, type RetryPolicy } from './retry-schedule.js';

const S = 1_000;
const M = 60 * S;
const H = 60 * M;
const t0 = Date.parse('2026-11-22T12:00:00.000Z');
const policy = DEFAULT_RETRY_POLICY;

describe('nextRetry: tiers', () => {
  const cases: Array<[string, { attempt: number; now: number; retryAfterMs?: number }, RetryDecision]> = [
    ['attempt 1 → tier 1, +10 s', { attempt: 1, now: t0 }, { action: 'retry', tier: 1, notBefore: t0 + 10 * S }],
    ['attempt 2 → tier 2, +1 min', { attempt: 2, now: t0 + 10 * S }, { action: 'retry', tier: 2, notBefore: t0 + 70 * S }],
    ['attempt 3 → tier 3, +10 min', { attempt: 3, now: t0 + 70 * S }, { action: 'retry', tier: 3, notBefore: t0 + 70 * S + 10 * M }],
    ['attempt 4 → tier 4, +1 h', { attempt: 4, now: t0 + 12 * M }, { action: 'retry', tier: 4, notBefore: t0 + 72 * M }],
    ['attempt 5 → the last tier repeats', { attempt: 5, now: t0 + 72 * M }, { action: 'retry', tier: 4, notBefore: t0 + 132 * M }],
    ['attempt 9 → still the last tier', { attempt: 9, now: t0 + 2 * H }, { action: 'retry', tier: 4, notBefore: t0 + 3 * H }],
    ['a retry landing exactly on the deadline is kept', { attempt: 6, now: t0 + 3 * H }, { action: 'retry', tier: 4, notBefore: t0 + 4 * H }],
    ['a retry landing past the deadline → a final attempt at the deadline', { attempt: 7, now: t0 + 3 * H + 1 }, { action: 'retry', tier: 4, notBefore: t0 + 4 * H }],
    ['the attempt after 3 h 11 → the deadline, not a dead letter', { attempt: 7, now: t0 + 11_470 * S }, { action: 'retry', tier: 4, notBefore: t0 + 4 * H }],
    ['an attempt ending exactly at the deadline → dead letter', { attempt: 8, now: t0 + 4 * H }, { action: 'dead_letter', reason: 'deadline' }],
    ['an attempt ending after the deadline → dead letter', { attempt: 8, now: t0 + 4 * H + 25 }, { action: 'dead_letter', reason: 'deadline' }],
    ['already past the deadline → dead letter', { attempt: 1, now: t0 + 5 * H }, { action: 'dead_letter', reason: 'deadline' }],
    ['Retry-After shorter than the tier → the tier delay', { attempt: 1, now: t0, retryAfterMs: 2 * S }, { action: 'retry', tier: 1, notBefore: t0 + 10 * S }],
    ['Retry-After within the tier bounds → honoured', { attempt: 1, now: t0, retryAfterMs: 30 * S }, { action: 'retry', tier: 1, notBefore: t0 + 30 * S }],
    ['Retry-After past the next tier → clamped to it', { attempt: 1, now: t0, retryAfterMs: 1 * H }, { action: 'retry', tier: 1, notBefore: t0 + 1 * M }],
    ['Retry-After in tier 3 → up to 1 h', { attempt: 3, now: t0, retryAfterMs: 45 * M }, { action: 'retry', tier: 3, notBefore: t0 + 45 * M }],
    ['Retry-After on the last tier → its own delay', { attempt: 4, now: t0, retryAfterMs: 3 * H }, { action: 'retry', tier: 4, notBefore: t0 + 1 * H }],
    ['Retry-After that would pass the deadline → the deadline', { attempt: 3, now: t0 + 3 * H + 30 * M, retryAfterMs: 45 * M }, { action: 'retry', tier: 3, notBefore: t0 + 4 * H }],
    ['a non-finite Retry-After is ignored', { attempt: 1, now: t0, retryAfterMs: Number.NaN }, { action: 'retry', tier: 1, notBefore: t0 + 10 * S }],
    ['attempt 0 is read as attempt 1', { attempt: 0, now: t0 }, { action: 'retry', tier: 1, notBefore: t0 + 10 * S }],
    ['a NaN attempt is read as attempt 1', { attempt: Number.NaN, now: t0 }, { action: 'retry', tier: 1, notBefore: t0 + 10 * S }],
  ];
  for (const [name, args, expected] of cases) {
    it(name, () => assert.deepEqual(nextRetry(policy, { ...args, firstAttemptAt: t0 }), expected));
  }
});

describe('nextRetry: a task over time, with a fake clock', () => {
  it('503 twice, then success: tier 1 at +10 s, tier 2 at +1 min after that', () => {
    let now = t0;
    const first = nextRetry(policy, { attempt: 1, firstAttemptAt: t0, now });
    assert.deepEqual(first, { action: 'retry', tier: 1, notBefore: t0 + 10 * S });
    now = first.action === 'retry' ? first.notBefore : now;
    const second = nextRetry(policy, { attempt: 2, firstAttemptAt: t0, now });
    assert.deepEqual(second, { action: 'retry', tier: 2, notBefore: t0 + 10 * S + 1 * M });
    // The third attempt succeeds: nothing more is asked of the schedule.
  });

  it('failing forever: tries at 0, 10 s, 1m10s, 11m10s, then hourly, a last time at 4 h, then dead-letters', () => {
    const tries: number[] = [t0];
    let decision: RetryDecision;
    for (let attempt = 1; ; attempt++) {
      decision = nextRetry(policy, { attempt, firstAttemptAt: t0, now: tries.at(-1)! });
      if (decision.action === 'dead_letter') break;
      tries.push(decision.notBefore);
    }
    assert.deepEqual(tries.map((t) => (t - t0) / S), [0, 10, 70, 670, 4270, 7870, 11470, 14400]);
    assert.deepEqual(decision, { action: 'dead_letter', reason: 'deadline' });
  });

  // [tiers, deadline, attempts each taking this long] → every retry as [tier, ms after the first attempt's start].
  const schedules: Array<[string, RetryPolicy, number, Array<[number, number]>]> = [
    ['default tiers, instant attempts', DEFAULT_RETRY_POLICY, 0,
      [[1, 10 * S], [2, 70 * S], [3, 670 * S], [4, 4270 * S], [4, 7870 * S], [4, 11_470 * S], [4, 4 * H]]],
    ['default tiers, attempts that time out after 5 s', DEFAULT_RETRY_POLICY, 5 * S,
      [[1, 15 * S], [2, 80 * S], [3, 685 * S], [4, 4290 * S], [4, 7895 * S], [4, 11_500 * S], [4, 4 * H]]],
    ['[100 ms, 200 ms], 1 s', { tiersMs: [100, 200], deadlineMs: 1_000 }, 0, [[1, 100], [2, 300], [2, 500], [2, 700], [2, 900], [2, 1_000]]],
    ['[1 min, 5 min], 7 min', { tiersMs: [M, 5 * M], deadlineMs: 7 * M }, 0, [[1, M], [2, 6 * M], [2, 7 * M]]],
    ['[1 min, 5 min], exactly 11 min', { tiersMs: [M, 5 * M], deadlineMs: 11 * M }, 0, [[1, M], [2, 6 * M], [2, 11 * M]]],
    ['one tier longer than the deadline', { tiersMs: [10 * S], deadlineMs: 5 * S }, 0, [[1, 5 * S]]],
    ['a zero deadline: no retry at all', { tiersMs: [10 * S], deadlineMs: 0 }, 0, []],
  ];
  for (const [name, p, attemptMs, expected] of schedules) {
    it(`schedule: ${name}`, () => {
      const tries: Array<[number, number]> = [];
      let start = t0;
      for (let attempt = 1; attempt < 100; attempt++) {
        const d = nextRetry(validateRetryPolicy(p), { attempt, firstAttemptAt: t0, now: start + attemptMs });
        if (d.action === 'dead_letter') break;
        tries.push([d.tier, d.notBefore - t0]);
        start = d.notBefore;
      }
      assert.deepEqual(tries, expected);
    });
  }
});

describe('validateRetryPolicy', () => {
  const bad: Array<[string, RetryPolicy]> = [
    ['no tiers', { tiersMs: [], deadlineMs: 1 }],
    ['a zero delay', { tiersMs: [10, 0], deadlineMs: 1 }],
    ['a negative delay', { tiersMs: [-1], deadlineMs: 1 }],
    ['an infinite delay', { tiersMs: [Infinity], deadlineMs: 1 }],
    ['a negative deadline', { tiersMs: [10], deadlineMs: -1 }],
    ['a NaN deadline', { tiersMs: [10], deadlineMs: Number.NaN }],
  ];
  for (const [name, p] of bad) it(`refuses ${name}`, () => assert.throws(() => validateRetryPolicy(p), RangeError));

  it('accepts the default and returns a frozen copy', () => {
    const tiers = [10, 20];
    const p = validateRetryPolicy({ tiersMs: tiers, deadlineMs: 100 });
    tiers.push(30);
    assert.deepEqual(p.tiersMs, [10, 20]);
    assert.ok(Object.isFrozen(p) && Object.isFrozen(p.tiersMs));
    assert.deepEqual(validateRetryPolicy(DEFAULT_RETRY_POLICY), DEFAULT_RETRY_POLICY);
  });
});
