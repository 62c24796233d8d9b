import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { StallDetector } from './stall-detector.js';

describe('StallDetector', () => {
  it('a destination that never answered is stalled once its oldest request waited past the floor', () => {
    const d = new StallDetector({ floorMs: 150, ceilingMs: 500, factor: 4 });
    d.started('hung', 1000);
    d.started('hung', 1010);
    assert.equal(d.stalled('hung', 1150), false);
    assert.equal(d.stalled('hung', 1151), true);
  });

  it('a busy destination that keeps finishing requests is not stalled, however old its oldest request', () => {
    const d = new StallDetector({ floorMs: 150, ceilingMs: 500, factor: 4 });
    const slowest = d.started('busy', 0); // one request that takes long (a slow URL among fast ones)
    for (let t = 0; t < 2000; t += 10) d.finished('busy', d.started('busy', t), t + 5);
    assert.equal(d.stalled('busy', 2000), false);
    d.finished('busy', slowest, 2000);
  });

  it('stops finishing requests: stalled after factor × its usual latency since the last one', () => {
    const d = new StallDetector({ floorMs: 150, ceilingMs: 500, factor: 4 });
    for (let t = 0; t < 1000; t += 10) d.finished('slow', d.started('slow', t), t + 100); // 100 ms answers
    assert.equal(d.thresholdMs('slow'), 400);
    d.started('slow', 1000); // then it hangs
    assert.equal(d.stalled('slow', 1090 + 400), false, 'measured from its last finished request (1090)');
    assert.equal(d.stalled('slow', 1091 + 400), true);
  });

  it('the threshold stays within floor and ceiling', () => {
    const d = new StallDetector({ floorMs: 150, ceilingMs: 500, factor: 4 });
    d.finished('fast', d.started('fast', 0), 2);
    d.finished('crawling', d.started('crawling', 0), 5000);
    assert.equal(d.thresholdMs('fast'), 150);
    assert.equal(d.thresholdMs('crawling'), 500);
    assert.equal(d.thresholdMs('unknown'), 150);
  });

  it('a stall confirmed after the I/O was read holds until one of its requests finishes', () => {
    const d = new StallDetector({ floorMs: 150, ceilingMs: 500, factor: 4 });
    const mark = d.started('hung', 0);
    assert.equal(d.confirm('hung', 100), false);
    assert.equal(d.confirmedStalled('hung'), false, 'not stalled yet');
    assert.equal(d.confirm('hung', 200), true);
    assert.equal(d.confirmedStalled('hung'), true);
    d.finished('hung', mark, 210);
    assert.equal(d.confirmedStalled('hung'), false, 'it answered');
    assert.equal(d.confirmedStalled('unknown'), false);
  });

  it('nothing in flight is never stalled', () => {
    const d = new StallDetector();
    assert.equal(d.stalled('idle', 10_000), false);
    const mark = d.started('idle', 0);
    d.finished('idle', mark, 1);
    assert.equal(d.stalled('idle', 10_000), false);
  });
});
