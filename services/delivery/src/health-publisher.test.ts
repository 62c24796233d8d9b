import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createLogger } from '@switchyard/platform/logger';
import type { DestinationHealth } from '@switchyard/platform/schemas/generated';
import { HEALTH_REFRESH_MS } from './failing-clock.js';
import { HEALTH_MIN_WRITE_INTERVAL_MS, HealthPublisher } from './health-publisher.js';

const T0 = 1_700_000_000_000;

/** A publisher on a fake clock whose timers fire as the clock passes them; writes succeed unless `write` says otherwise. */
function publisher(write: (h: DestinationHealth) => Promise<void> = async () => undefined) {
  let now = T0;
  const timers: Array<{ due: number; fn: () => void }> = [];
  const written: DestinationHealth[] = [];
  const logs: Array<{ level: string; msg: string }> = [];
  const logger = createLogger({ service: 'test', level: 'info', destination: { write: (line: string) => void logs.push(JSON.parse(line) as { level: string; msg: string }) } });
  const health = new HealthPublisher({
    writer: 'w1', clock: () => now, logger,
    write: (h) => { written.push(h); return write(h); },
    setTimer: (fn, ms) => void timers.push({ due: now + ms, fn }),
  });
  const advance = async (ms: number): Promise<void> => {
    now += ms;
    for (let t = timers.findIndex((x) => x.due <= now); t !== -1; t = timers.findIndex((x) => x.due <= now)) timers.splice(t, 1)[0]!.fn();
    await settle();
  };
  return { health, written, logs, advance, timers, now: () => now };
}

// A write's completion runs in a promise callback: let it.
const settle = () => new Promise((r) => setImmediate(r));
const clock = (h: DestinationHealth) => [h.failingSince === null ? null : h.failingSince - T0, h.lastFailureAt === null ? null : h.lastFailureAt - T0, h.at - T0];

describe('HealthPublisher: the failing clock delivery reports for control', () => {
  it('writes nothing for a destination that keeps answering', async () => {
    const { health, written, advance } = publisher();
    for (let i = 0; i < 5; i++) { health.attempted('d', true); await advance(3_000); }
    assert.deepEqual(written, []);
  });

  it('the first failure starts the clock; later failures move lastFailureAt at most every refresh interval', async () => {
    const { health, written, advance, logs } = publisher();
    health.attempted('d', false);
    await settle();
    assert.deepEqual(written, [{ destinationId: 'd', failingSince: T0, lastFailureAt: T0, at: T0, writer: 'w1' }]);
    assert.ok(logs.some((l) => l.msg === 'destination fails: its failing clock started'));
    await advance(2_000);
    health.attempted('d', false);
    await advance(HEALTH_REFRESH_MS - 3_000);
    health.attempted('d', false);
    await settle();
    assert.equal(written.length, 1, 'no record for failures within the refresh interval');
    await advance(1_000);
    health.attempted('d', false);
    await settle();
    assert.deepEqual(written.map(clock), [[0, 0, 0], [0, HEALTH_REFRESH_MS, HEALTH_REFRESH_MS]]);
  });

  it('a success right after a failure stops the clock once the least interval between records is up', async () => {
    const { health, written, advance, logs } = publisher();
    health.attempted('d', false);
    await advance(200);
    health.attempted('d', true);
    await settle();
    assert.equal(written.length, 1, 'held: one record a second at most');
    await advance(HEALTH_MIN_WRITE_INTERVAL_MS - 200);
    assert.deepEqual(written.map(clock), [[0, 0, 0], [null, 0, HEALTH_MIN_WRITE_INTERVAL_MS]]);
    assert.ok(logs.some((l) => l.msg === 'destination answers again: its failing clock stopped'));
    health.attempted('d', true);
    await advance(5_000);
    assert.equal(written.length, 2, 'a stopped clock is not reported again');
  });

  it("another instance's records count: its success stops the clock this one started, and its clock is stopped by this one's success", async () => {
    const { health, written, advance } = publisher();
    health.attempted('d', false);
    await settle();
    health.apply({ destinationId: 'd', failingSince: null, lastFailureAt: T0, at: T0 + 500, writer: 'w2' });
    await advance(5_000);
    health.attempted('d', false);
    await settle();
    assert.deepEqual(written.map(clock).at(-1), [5_000, 5_000, 5_000], 'a new failing period');

    health.apply({ destinationId: 'e', failingSince: T0 - 60_000, lastFailureAt: T0, at: T0, writer: 'w2' });
    health.attempted('e', true);
    await settle();
    assert.deepEqual(written.filter((h) => h.destinationId === 'e').map(clock), [[null, 0, 5_000]]);
  });

  it('attempts made while a write is under way are folded into one record after it', async () => {
    let release = (): void => undefined;
    let calls = 0;
    const { health, written, advance } = publisher(() => (++calls === 1 ? new Promise<void>((r) => { release = r; }) : Promise.resolve()));
    health.attempted('d', false);
    await advance(1_500);
    health.attempted('d', true);
    await advance(100);
    health.attempted('d', false);
    await settle();
    assert.equal(written.length, 1, 'nothing while the first write is out');
    release();
    await settle();
    // The success stopped the first clock and the failure after it started another: one record says both.
    assert.deepEqual(written.map(clock), [[0, 0, 0], [1_600, 1_600, 1_600]]);
  });

  it('a failed write is logged, never thrown, and the next refresh carries the clock', async () => {
    let calls = 0;
    const { health, written, advance, logs } = publisher(() => (++calls === 1 ? Promise.reject(new Error('broker gone')) : Promise.resolve()));
    health.attempted('d', false);
    await settle();
    assert.ok(logs.some((l) => l.level === 'warn' && l.msg === 'destination health not written'));
    await advance(HEALTH_REFRESH_MS);
    health.attempted('d', false);
    await settle();
    assert.deepEqual(written.map(clock), [[0, 0, 0], [0, HEALTH_REFRESH_MS, HEALTH_REFRESH_MS]]);
  });

  it('destinations are independent: one held does not hold another', async () => {
    const { health, written, advance } = publisher();
    health.attempted('a', false);
    await advance(100);
    health.attempted('a', true);
    health.attempted('b', false);
    await settle();
    assert.deepEqual(written.map((h) => [h.destinationId, h.failingSince === null ? null : h.failingSince - T0]), [['a', 0], ['b', 100]]);
  });
});
