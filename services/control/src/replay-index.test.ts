import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Replay, ReplayProgress } from '@switchyard/platform/schemas/generated';
import { replayView } from './replay-index.js';

const T = Date.UTC(2026, 10, 22, 10);
const replay: Replay = { id: 'rpl_1', destinationId: 'd', sourceId: 's', from: T - 3_600_000, to: T, filter: '{"types":["track"]}', rate: 500, createdAt: T, cancelRequestedAt: null };
const progress = (over: Partial<ReplayProgress> = {}): ReplayProgress => ({
  id: 'rpl_1', state: 'running', scanned: 3000, matched: 2500, enqueued: 2500, startedAt: T, updatedAt: T + 6000, runningMs: 6000, error: null,
  partitions: [{ partition: 0, start: 0, end: 5000, next: 2000, retainedFrom: null }, { partition: 1, start: 100, end: 5100, next: 1100, retainedFrom: T - 3_000_000 }],
  ...over,
});

describe('replayView: state, counts, rate and time left', () => {
  it('before fan-out picked it up: running, nothing known yet', () => {
    const v = replayView(replay, undefined);
    assert.deepEqual([v.state, v.total, v.scanned, v.progress, v.recordsPerSecond, v.etaSeconds], ['running', null, 0, 0, null, null]);
    assert.deepEqual(v.filter, { types: ['track'] });
  });

  it('running: progress, measured rate and estimated time left; the part before retention is reported', () => {
    const v = replayView(replay, progress());
    assert.deepEqual([v.total, v.scanned, v.matched, v.enqueued, v.progress, v.recordsPerSecond, v.etaSeconds], [10_000, 3000, 2500, 2500, 0.3, 500, 14]);
    assert.deepEqual(v.notReplayable, [{ partition: 1, from: new Date(T - 3_600_000).toISOString(), to: new Date(T - 3_000_000).toISOString() }]);
  });

  it('done or cancelled: no time left', () => {
    assert.equal(replayView(replay, progress({ state: 'done' })).etaSeconds, null);
    assert.equal(replayView({ ...replay, cancelRequestedAt: T + 1 }, progress({ state: 'cancelled' })).state, 'cancelled');
  });
});
