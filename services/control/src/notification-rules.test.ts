import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DeadLetterWindows, FailingNotices, shouldDisable } from './notification-rules.js';

const HOUR = 3_600_000;
const webhooks = { type: 'webhooks', enabled: true, updatedAt: 0 };

describe('shouldDisable', () => {
  it('disables once a failure is reported the whole period after the clock started', () => {
    assert.equal(shouldDisable({ failingSince: 1000, lastFailureAt: 1000 + 29_999 }, webhooks, 30_000), false);
    assert.equal(shouldDisable({ failingSince: 1000, lastFailureAt: 1000 + 30_000 }, webhooks, 30_000), true);
  });

  it('does nothing while the clock is stopped (a success reset it)', () => {
    assert.equal(shouldDisable({ failingSince: null, lastFailureAt: 10 * HOUR }, webhooks, 1), false);
  });

  it('counts from the last change of the destination, so enabling it again restarts the period', () => {
    assert.equal(shouldDisable({ failingSince: 0, lastFailureAt: 100_000 }, { ...webhooks, updatedAt: 90_000 }, 30_000), false);
    assert.equal(shouldDisable({ failingSince: 0, lastFailureAt: 120_000 }, { ...webhooks, updatedAt: 90_000 }, 30_000), true);
  });

  it('leaves disabled, deleted and notification destinations alone', () => {
    const h = { failingSince: 0, lastFailureAt: HOUR };
    assert.equal(shouldDisable(h, { ...webhooks, enabled: false }, 1), false);
    assert.equal(shouldDisable(h, undefined, 1), false);
    assert.equal(shouldDisable(h, { ...webhooks, type: 'notifications' }, 1), false);
  });
});

describe('FailingNotices', () => {
  it('notifies the first failure after a success, once per failing period', () => {
    const n = new FailingNotices();
    assert.equal(n.observe({ destinationId: 'd', failingSince: 1000 }), true);
    assert.equal(n.observe({ destinationId: 'd', failingSince: 1000 }), false);
    assert.equal(n.observe({ destinationId: 'd', failingSince: null }), false);
  });

  it('notifies a destination at most once an hour, other destinations apart', () => {
    const n = new FailingNotices();
    assert.equal(n.observe({ destinationId: 'd', failingSince: 0 }), true);
    assert.equal(n.observe({ destinationId: 'e', failingSince: 10 }), true);
    assert.equal(n.observe({ destinationId: 'd', failingSince: HOUR - 1 }), false);
    assert.equal(n.observe({ destinationId: 'd', failingSince: HOUR + 5 }), true);
  });

  it('rebuilds the same throttle when the records are read again after a restart', () => {
    const before = new FailingNotices();
    before.observe({ destinationId: 'd', failingSince: 0 });
    const after = new FailingNotices();
    // The compacted topic's latest record of the destination, read again.
    after.observe({ destinationId: 'd', failingSince: 0 });
    assert.equal(after.observe({ destinationId: 'd', failingSince: 60_000 }), false);
  });
});

describe('DeadLetterWindows', () => {
  const letter = (failedAt: number, reason = 'deadline', destinationId = 'd') => ({ destinationId, sourceId: 's', reason, failedAt });

  it('counts a destination\'s dead letters per minute with their reasons, once the window and its grace ended', () => {
    const w = new DeadLetterWindows(0, 60_000, 5_000);
    w.add(letter(60_000)); w.add(letter(61_000, 'destination_disabled')); w.add(letter(119_999)); w.add(letter(120_000));
    assert.deepEqual(w.due(124_999), []);
    assert.deepEqual(w.due(125_000), [{ destinationId: 'd', sourceId: 's', from: 60_000, to: 120_000, count: 3, reasons: { deadline: 2, destination_disabled: 1 } }]);
    assert.deepEqual(w.due(125_000), []);
    assert.equal(w.due(185_000)[0]?.count, 1);
  });

  it('keeps destinations apart', () => {
    const w = new DeadLetterWindows(0);
    w.add(letter(1, 'deadline', 'a')); w.add(letter(2, 'deadline', 'b'));
    assert.deepEqual(w.due(70_000).map((x) => x.destinationId).sort(), ['a', 'b']);
  });

  it('drops windows that ended before this instance started (read again from the topic)', () => {
    const w = new DeadLetterWindows(200_000, 60_000, 5_000);
    w.add(letter(100_000)); w.add(letter(190_000));
    assert.deepEqual(w.due(300_000).map((x) => x.from), [180_000]);
  });
});
