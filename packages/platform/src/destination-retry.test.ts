import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { appliedRetryPolicy, checkRetryPolicy, retryPolicyLimits, retryPolicyText } from './destination-retry.js';
import { DEFAULT_RETRY_POLICY } from './retry-schedule.js';

const S = 1_000;
const M = 60 * S;
const H = 60 * M;
const limits = retryPolicyLimits(DEFAULT_RETRY_POLICY.tiersMs);

describe('retryPolicyLimits', () => {
  it('bounds tiers by the deployment\'s shortest and longest tier, the deadline by 1 s and 24 h', () => {
    assert.deepEqual(limits, { minTierMs: 10 * S, maxTierMs: 1 * H, minDeadlineMs: 1 * S, maxDeadlineMs: 24 * H });
  });
});

describe('checkRetryPolicy', () => {
  it('accepts tiers within the deployment\'s and a deadline up to 24 h', () => {
    assert.deepEqual(checkRetryPolicy({ tiers: ['30s', '5m', '1h'], deadline: '24h' }, limits), { ok: true, policy: { tiersMs: [30 * S, 5 * M, 1 * H], deadlineMs: 24 * H } });
  });
  it('accepts the bounds themselves', () => {
    assert.equal(checkRetryPolicy({ tiers: ['10s', '1h'], deadline: '1s' }, limits).ok, true);
  });
  const refused: Array<[string, { tiers: string[]; deadline: string }, string]> = [
    ['no tiers', { tiers: [], deadline: '4h' }, 'tiers'],
    ['more than 20 tiers', { tiers: Array.from({ length: 21 }, () => '1m'), deadline: '4h' }, 'tiers'],
    ['a tier that is not a duration', { tiers: ['30s', 'soon'], deadline: '4h' }, 'tiers[1]'],
    ['a fractional tier', { tiers: ['1.5m'], deadline: '4h' }, 'tiers[0]'],
    ['a tier shorter than the shortest tier topic', { tiers: ['5s'], deadline: '4h' }, 'tiers[0]'],
    ['a tier longer than the longest tier topic', { tiers: ['30s', '2h'], deadline: '4h' }, 'tiers[1]'],
    ['a deadline that is not a duration', { tiers: ['30s'], deadline: '4 hours' }, 'deadline'],
    ['a deadline in days', { tiers: ['30s'], deadline: '1d' }, 'deadline'],
    ['a deadline over 24 h', { tiers: ['30s'], deadline: '25h' }, 'deadline'],
    ['a deadline under 1 s', { tiers: ['30s'], deadline: '999ms' }, 'deadline'],
  ];
  for (const [name, text, field] of refused) {
    it(`refuses ${name}, naming ${field}`, () => {
      const check = checkRetryPolicy(text, limits);
      assert.equal(check.ok, false);
      if (!check.ok) assert.equal(check.field, field);
    });
  }
});

describe('retryPolicyText', () => {
  it('shows the stored milliseconds as durations', () => {
    assert.deepEqual(retryPolicyText({ tiersMs: [30 * S, 90 * S, 1 * H], deadlineMs: 4 * H }), { tiers: ['30s', '90s', '1h'], deadline: '4h' });
  });
});

describe('appliedRetryPolicy', () => {
  it('no destination, or none of its own: the deployment\'s policy, named default', () => {
    assert.deepEqual(appliedRetryPolicy(undefined, DEFAULT_RETRY_POLICY), { source: 'default', policy: DEFAULT_RETRY_POLICY });
    assert.equal(appliedRetryPolicy({ retry: null }, DEFAULT_RETRY_POLICY).policy, DEFAULT_RETRY_POLICY);
  });
  it('its own: named destination, built once per stored policy', () => {
    const destination = { retry: { tiersMs: [1 * S, 2 * S], deadlineMs: 5 * S } };
    const applied = appliedRetryPolicy(destination, DEFAULT_RETRY_POLICY);
    assert.deepEqual(applied, { source: 'destination', policy: { tiersMs: [1 * S, 2 * S], deadlineMs: 5 * S } });
    assert.equal(appliedRetryPolicy(destination, DEFAULT_RETRY_POLICY), applied);
  });
});
