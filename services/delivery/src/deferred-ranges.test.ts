import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { DeliveryTask } from '@switchyard/platform/schemas/generated';
import { BatchRanges, MAX_RANGE_SPAN, MAX_RANGE_TASKS, mayJoinRange, resumedFromRange } from './deferred-ranges.js';

const task = (destinationId: string, overrides: Partial<DeliveryTask> = {}): DeliveryTask => ({
  taskId: `m:${destinationId}`, messageId: 'm', sourceId: 's', destinationId, eventType: 'track', userKey: 'u', body: '{}',
  receivedAt: 1, createdAt: 1, attempt: 0, firstAttemptAt: null, deadline: null, notBefore: null, pendingUrls: null, lastStatus: null, lastError: null, ...overrides,
});

describe('deferred ranges', () => {
  it('only tasks never attempted, for every URL, join a range', () => {
    assert.equal(mayJoinRange(task('d')), true);
    assert.equal(mayJoinRange(task('d', { attempt: 1, firstAttemptAt: 5 })), false);
    assert.equal(mayJoinRange(task('d', { pendingUrls: ['http://a'] })), false);
    assert.equal(mayJoinRange(task('d', { notBefore: 9 })), false);
  });

  it('one range per destination, from its first deferred task to its last', () => {
    const ranges = new BatchRanges('delivery', 3);
    assert.equal(ranges.add(task('a'), '10', 'circuit_open'), undefined);
    assert.equal(ranges.add(task('b'), '11', 'overloaded'), undefined);
    assert.equal(ranges.add(task('a'), '14', 'overloaded'), undefined);
    const drained = ranges.drain();
    assert.equal(ranges.size, 0);
    const a = drained.find((r) => r.destinationId === 'a')!;
    assert.deepEqual([a.topic, a.partition, a.from, a.to, a.offsets, a.reasons], ['delivery', 3, '10', '14', ['10', '14'], ['circuit_open', 'overloaded']]);
    assert.deepEqual(drained.find((r) => r.destinationId === 'b')!.offsets, ['11']);
  });

  it('a task of the destination that is not deferred ends its range before it', () => {
    const ranges = new BatchRanges('delivery', 0);
    ranges.add(task('a'), '1', 'circuit_open');
    const ended = ranges.end('a');
    assert.deepEqual(ended?.offsets, ['1']);
    assert.equal(ranges.end('a'), undefined);
    ranges.add(task('a'), '3', 'circuit_open');
    assert.deepEqual(ranges.drain().map((r) => r.from), ['3']);
  });

  it('a range is closed when full, or when the next task lies too far from its start', () => {
    const ranges = new BatchRanges('delivery', 0);
    let closed;
    for (let i = 0; i < MAX_RANGE_TASKS && !closed; i++) closed = ranges.add(task('a'), String(i), 'circuit_open');
    assert.equal(closed?.tasks.length, MAX_RANGE_TASKS);
    assert.equal(ranges.size, 0);
    ranges.add(task('a'), '1000', 'circuit_open');
    const wide = ranges.add(task('a'), String(1000 + MAX_RANGE_SPAN), 'circuit_open');
    assert.deepEqual(wide?.offsets, ['1000']);
    assert.deepEqual(ranges.drain()[0]!.offsets, [String(1000 + MAX_RANGE_SPAN)]);
  });

  it('a task read back carries the range attempt count, first attempt and deadline', () => {
    const resumed = resumedFromRange(task('a'), { attempt: 3, firstAttemptAt: 100, deadline: 200, lastError: 'circuit_open' });
    assert.deepEqual([resumed.attempt, resumed.firstAttemptAt, resumed.deadline, resumed.lastError, resumed.taskId], [3, 100, 200, 'circuit_open', 'm:a']);
  });
});

describe('held ranges (rate limit)', () => {
  const fresh = (destinationId: string, taskId: string): DeliveryTask => ({
    taskId, messageId: taskId, sourceId: 's', destinationId, eventType: 'track', userKey: 'u', body: '{}', receivedAt: 0, createdAt: 0,
    attempt: 0, firstAttemptAt: null, deadline: null, notBefore: null, pendingUrls: null, lastStatus: null, lastError: null,
  });

  it('a range is all holds or all deferrals: a task of the other kind closes it (only deferrals count an attempt)', () => {
    const ranges = new BatchRanges('delivery', 0);
    assert.equal(ranges.add(fresh('d', 'a'), '1', 'rate_limited'), undefined);
    assert.equal(ranges.add(fresh('d', 'b'), '2', 'rate_limited'), undefined);
    const closed = ranges.add(fresh('d', 'c'), '3', 'circuit_open');
    assert.deepEqual(closed?.offsets, ['1', '2']);
    assert.deepEqual(ranges.drain().map((r) => r.reasons), [['circuit_open']]);
  });

  it('a held range (attempt 0) runs its tasks as fan-out wrote them: no attempt, no deadline', () => {
    const task = fresh('d', 'a');
    assert.deepEqual(resumedFromRange(task, { attempt: 0, firstAttemptAt: 0, deadline: 0, lastError: 'rate_limited' }), task);
    assert.equal(resumedFromRange(task, { attempt: 2, firstAttemptAt: 5, deadline: 10, lastError: 'circuit_open' }).deadline, 10);
  });
});
