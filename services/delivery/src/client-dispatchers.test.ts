import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Dispatcher } from 'undici';
import { ClientDispatchers } from './client-dispatchers.js';

/** A stand-in dispatcher that records whether it was closed. */
function fakeDispatcher(label: string): Dispatcher & { label: string; closed: boolean } {
  const d = { label, closed: false, close: async () => { d.closed = true; } };
  return d as unknown as Dispatcher & { label: string; closed: boolean };
}

describe('ClientDispatchers', () => {
  const setup = () => {
    let now = 0;
    const built: Array<ReturnType<typeof fakeDispatcher>> = [];
    const dispatchers = new ClientDispatchers((c) => { const d = fakeDispatcher(c.cert); built.push(d); return d; }, () => now, 1000);
    return { dispatchers, built, advance: (ms: number) => { now += ms; } };
  };
  const pair = (n: number) => ({ cert: `cert-${n}`, key: `key-${n}` });

  it('builds one dispatcher per destination and URL and reuses it while the certificate is the same (a new equal object included)', () => {
    const { dispatchers, built } = setup();
    const first = dispatchers.for('d1', 'https://a.example/x', pair(1));
    assert.equal(dispatchers.for('d1', 'https://a.example/x', pair(1)), first, 'an equal certificate from a re-decoded record');
    assert.notEqual(dispatchers.for('d1', 'https://b.example/y', pair(1)), first, 'another URL');
    assert.notEqual(dispatchers.for('d2', 'https://a.example/x', pair(2)), first, 'another destination on the same URL');
    assert.equal(dispatchers.for('d1', 'https://a.example/x', pair(1)), first, 'not replaced by the other destination');
    assert.equal(built.length, 3);
  });

  it('a changed certificate or key replaces the dispatcher and closes the old one', () => {
    const { dispatchers, built } = setup();
    const first = dispatchers.for('d1', 'https://a.example/x', pair(1));
    const second = dispatchers.for('d1', 'https://a.example/x', { cert: 'cert-1', key: 'key-rotated' });
    assert.notEqual(second, first);
    assert.equal(built[0]!.closed, true);
    const third = dispatchers.for('d1', 'https://a.example/x', pair(3));
    assert.equal((third as unknown as { label: string }).label, 'cert-3');
    assert.equal(built[1]!.closed, true);
    assert.equal(dispatchers.size, 1);
  });

  it('closes dispatchers unused for the idle time when it next builds one, and all on close', async () => {
    const { dispatchers, built, advance } = setup();
    dispatchers.for('gone', 'https://a.example/x', pair(1));
    advance(500);
    dispatchers.for('kept', 'https://b.example/y', pair(2));
    advance(600);
    dispatchers.for('kept', 'https://b.example/y', pair(2));
    dispatchers.for('new', 'https://c.example/z', pair(3));
    assert.deepEqual(built.map((d) => d.closed), [true, false, false]);
    assert.equal(dispatchers.size, 2);
    await dispatchers.close();
    assert.deepEqual(built.map((d) => d.closed), [true, true, true]);
    assert.equal(dispatchers.size, 0);
  });
});
