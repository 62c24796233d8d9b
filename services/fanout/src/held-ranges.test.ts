import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { AppliedRetryPolicy } from '@switchyard/platform/destination-retry';
import { DEFAULT_RETRY_POLICY, type RetryPolicy } from '@switchyard/platform/retry-schedule';
import { HeldRanges, MAX_HELD_EVENTS, MAX_HELD_SPAN, mayHold } from './held-ranges.js';

const NOW = 1_700_000_000_000;
const topics = DEFAULT_RETRY_POLICY.tiersMs;
const byDefault = (policy: RetryPolicy = DEFAULT_RETRY_POLICY) => (): AppliedRetryPolicy => ({ source: 'default', policy });

describe('HeldRanges: the tasks fan-out holds, as first-tier range records', () => {
  it('one range per destination and source, naming its ingest offsets, due like a first deferral', () => {
    const held = new HeldRanges('ingest', 3);
    held.add('d1', 's1', 10, 'm10', 'circuit_open');
    held.add('d2', 's1', 10, 'm10', 'circuit_open');
    held.add('d1', 's2', 11, 'm11', 'circuit_open');
    held.add('d1', 's1', 14, 'm14', 'circuit_open');
    const records = held.records(byDefault(), topics, NOW);
    assert.deepEqual(records.map((r) => [r.key, r.range.destinationId, r.trace!.sourceId, r.range.heldOffsets, r.trace!.messageIds]), [
      ['d1:range:3', 'd1', 's1', [10, 14], ['m10', 'm14']],
      ['d2:range:3', 'd2', 's1', [10], ['m10']],
      ['d1:range:3', 'd1', 's2', [11], ['m11']],
    ]);
    const [first] = records;
    assert.deepEqual(first!.range, {
      destinationId: 'd1', topic: 'ingest', partition: 3, fromOffset: 10, toOffset: 14, tasks: 2, attempt: 1, firstAttemptAt: NOW,
      deadline: NOW + DEFAULT_RETRY_POLICY.deadlineMs, notBefore: NOW + DEFAULT_RETRY_POLICY.tiersMs[0]!, lastError: 'circuit_open', heldOffsets: [10, 14],
    });
    assert.equal(first!.tier, 1);
    assert.deepEqual(first!.trace, { destinationId: 'd1', sourceId: 's1', messageIds: ['m10', 'm14'], error: 'circuit_open', attempt: 1, at: NOW, nextTier: 1, notBefore: NOW + DEFAULT_RETRY_POLICY.tiersMs[0]!, retryPolicy: 'default' });
  });

  it('a destination with its own policy: its first wait and deadline, in the tier topic that covers the wait', () => {
    const held = new HeldRanges('ingest', 0);
    held.add('own', 's', 1, 'm1', 'circuit_open');
    held.add('plain', 's', 2, 'm2', 'circuit_open');
    const own: AppliedRetryPolicy = { source: 'destination', policy: { tiersMs: [30_000], deadlineMs: 3_600_000 } };
    const records = held.records((id) => (id === 'own' ? own : byDefault()()), topics, NOW);
    assert.deepEqual(records.map((r) => [r.range.destinationId, r.tier, r.range.notBefore! - NOW, r.range.deadline - NOW, r.trace!.retryPolicy]), [
      ['own', 2, 30_000, 3_600_000, 'destination'],
      ['plain', 1, 10_000, DEFAULT_RETRY_POLICY.deadlineMs, 'default'],
    ]);
  });

  it('held for a rate limit: attempt 0 in the first tier, due after its delay, no deadline started and no trace', () => {
    const held = new HeldRanges('ingest', 2);
    held.add('limited', 's', 7, 'm7', 'rate_limited');
    held.add('limited', 's', 9, 'm9', 'rate_limited');
    const own: AppliedRetryPolicy = { source: 'destination', policy: { tiersMs: [30_000], deadlineMs: 3_600_000 } };
    const [record] = held.records(() => own, topics, NOW);
    assert.equal(record!.tier, 1);
    assert.equal(record!.trace, undefined);
    assert.deepEqual(record!.range, {
      destinationId: 'limited', topic: 'ingest', partition: 2, fromOffset: 7, toOffset: 9, tasks: 2, heldOffsets: [7, 9],
      attempt: 0, firstAttemptAt: NOW, deadline: 0, notBefore: NOW + topics[0]!, lastError: 'rate_limited',
    });
  });

  it('a range closes at its event and span limits: every held event is in exactly one range', () => {
    const held = new HeldRanges('ingest', 0);
    const offsets = [...Array.from({ length: MAX_HELD_EVENTS + 1 }, (_, i) => i), MAX_HELD_SPAN + 1000];
    for (const o of offsets) held.add('d', 's', o, `m${o}`, 'circuit_open');
    const ranges = held.records(byDefault(), topics, NOW).map((r) => r.range);
    assert.deepEqual(ranges.map((r) => r.tasks), [MAX_HELD_EVENTS, 1, 1]);
    assert.deepEqual(ranges.flatMap((r) => r.heldOffsets), offsets);
    for (const r of ranges) assert.ok(r.toOffset - r.fromOffset < MAX_HELD_SPAN);
  });

  it('nothing is held under a policy that leaves no time', () => {
    assert.equal(mayHold({ tiersMs: [1000], deadlineMs: 0 }), false);
    assert.equal(mayHold(DEFAULT_RETRY_POLICY), true);
    const held = new HeldRanges('ingest', 0);
    held.add('d', 's', 1, 'm1', 'circuit_open');
    assert.throws(() => held.records(byDefault({ tiersMs: [1000], deadlineMs: 0 }), [1000], NOW), /deadline/);
  });
});
