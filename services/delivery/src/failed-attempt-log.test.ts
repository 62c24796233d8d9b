import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createLogger } from '@switchyard/platform/logger';
import { FailedAttemptLog, type FailedAttempt } from './failed-attempt-log.js';

type Line = Record<string, unknown> & { msg: string };

function setup(perWindow = 3, windowMs = 60_000) {
  const lines: Line[] = [];
  const clock = { now: Date.parse('2026-11-24T10:00:00.000Z') };
  const logger = createLogger({ service: 'test', level: 'info', destination: { write: (s: string) => { lines.push(JSON.parse(s) as Line); } } });
  const log = new FailedAttemptLog({ logger, clock: () => clock.now, perWindow, windowMs });
  return { lines, clock, log };
}

const failed = (over: Partial<FailedAttempt> = {}): FailedAttempt => ({
  destinationId: 'dst_a', taskId: 'm1:dst_a', messageId: 'm1', urlIndex: 0, attempt: 1, outcome: 'retry_scheduled',
  status: null, error: 'timeout', nextAttemptAt: Date.parse('2026-11-24T10:00:10.000Z'), deadLetterReason: null, ...over,
});

describe('FailedAttemptLog', () => {
  it('logs a failed attempt with destination, URL index, outcome, error, attempt and the next attempt time', () => {
    const { lines, log } = setup();
    log.record(failed());
    log.record(failed({ urlIndex: 2, status: 503, error: null, attempt: 3, outcome: 'dead_lettered', nextAttemptAt: null, deadLetterReason: 'deadline' }));
    assert.equal(lines.length, 2);
    assert.equal(lines[0]!.level, 'warn');
    assert.equal(lines[0]!.msg, 'delivery attempt failed');
    assert.deepEqual(
      { d: lines[0]!.destinationId, u: lines[0]!.urlIndex, o: lines[0]!.outcome, e: lines[0]!.error, a: lines[0]!.attempt, n: lines[0]!.nextAttemptAt },
      { d: 'dst_a', u: 0, o: 'retry_scheduled', e: 'timeout', a: 1, n: '2026-11-24T10:00:10.000Z' },
    );
    assert.deepEqual(
      { u: lines[1]!.urlIndex, s: lines[1]!.status, o: lines[1]!.outcome, r: lines[1]!.deadLetterReason, n: lines[1]!.nextAttemptAt },
      { u: 2, s: 503, o: 'dead_lettered', r: 'deadline', n: null },
    );
  });

  it('a dead endpoint cannot flood the log: the first few per destination and window, then one summary with counts', () => {
    const { lines, clock, log } = setup(3);
    for (let i = 0; i < 1000; i++) log.record(failed({ status: i % 2 ? 503 : null, error: i % 2 ? null : 'timeout' }));
    log.record(failed({ destinationId: 'dst_b' }));
    assert.equal(lines.filter((l) => l.destinationId === 'dst_a').length, 3);
    assert.equal(lines.filter((l) => l.destinationId === 'dst_b').length, 1, 'another destination has its own allowance');
    clock.now += 59_999;
    log.sweep();
    assert.equal(lines.length, 4, 'no summary before the window ends');
    clock.now += 1;
    log.sweep();
    const summary = lines.at(-1)!;
    assert.equal(lines.length, 5);
    assert.equal(summary.destinationId, 'dst_a');
    assert.equal(summary.suppressed, 997);
    assert.deepEqual(summary.byReason, { 'retry_scheduled:timeout': 498, 'retry_scheduled:status_503': 499 });
    // A new window logs again.
    log.record(failed());
    assert.equal(lines.at(-1)!.msg, 'delivery attempt failed');
  });

  it('a window that ends is summarised by the next failure too, and flush ends every window at once', () => {
    const { lines, clock, log } = setup(1);
    log.record(failed());
    log.record(failed());
    clock.now += 60_000;
    log.record(failed());
    assert.deepEqual(lines.map((l) => l.suppressed ?? l.msg), ['delivery attempt failed', 1, 'delivery attempt failed']);
    log.record(failed());
    log.record(failed());
    log.flush();
    assert.equal(lines.at(-1)!.suppressed, 2);
  });

  it('never logs the URL itself (it may carry a token)', () => {
    const { lines, log } = setup();
    log.record(failed());
    assert.doesNotMatch(JSON.stringify(lines), /https?:/);
  });
});
