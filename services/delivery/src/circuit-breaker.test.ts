import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { breakerKey, CircuitBreaker, isBreakerFailure } from './circuit-breaker.js';
import type { AttemptResult } from './outcome.js';

const fakeClock = (start = 1_000_000) => {
  let t = start;
  return { now: () => t, advance: (ms: number) => { t += ms; } };
};
const key = 'https://hooks.example';

function open(threshold = 3, openMs = 30_000) {
  const clock = fakeClock();
  const breaker = new CircuitBreaker({ failureThreshold: threshold, openMs, now: clock.now });
  for (let i = 0; i < threshold; i++) breaker.record(key, false);
  return { clock, breaker };
}

describe('CircuitBreaker', () => {
  it('refuses bad options', () => {
    const now = () => 0;
    assert.throws(() => new CircuitBreaker({ failureThreshold: 0, openMs: 1, now }), RangeError);
    assert.throws(() => new CircuitBreaker({ failureThreshold: 1.5, openMs: 1, now }), RangeError);
    assert.throws(() => new CircuitBreaker({ failureThreshold: 1, openMs: -1, now }), RangeError);
  });

  it('is closed for an unknown endpoint', () => {
    const b = new CircuitBreaker({ failureThreshold: 3, openMs: 1, now: () => 0 });
    assert.equal(b.state(key), 'closed');
    assert.ok(b.allow(key));
  });

  it('opens after the threshold of consecutive failures, not before', () => {
    const clock = fakeClock();
    const b = new CircuitBreaker({ failureThreshold: 3, openMs: 30_000, now: clock.now });
    b.record(key, false);
    b.record(key, false);
    assert.deepEqual([b.state(key), b.allow(key)], ['closed', true]);
    b.record(key, false);
    assert.deepEqual([b.state(key), b.allow(key)], ['open', false]);
  });

  it('a success resets the count: failures must be consecutive', () => {
    const clock = fakeClock();
    const b = new CircuitBreaker({ failureThreshold: 2, openMs: 30_000, now: clock.now });
    b.record(key, false);
    b.record(key, true);
    b.record(key, false);
    assert.equal(b.state(key), 'closed');
    b.record(key, false);
    assert.equal(b.state(key), 'open');
  });

  it('each endpoint has its own circuit', () => {
    const { breaker } = open();
    assert.equal(breaker.state(key), 'open');
    assert.deepEqual([breaker.state('https://other.example'), breaker.allow('https://other.example')], ['closed', true]);
  });

  const halfOpenCases: Array<[string, number, 'open' | 'half_open']> = [
    ['just opened', 0, 'open'],
    ['1 ms before openMs', 29_999, 'open'],
    ['at openMs', 30_000, 'half_open'],
    ['long after', 600_000, 'half_open'],
  ];
  for (const [name, elapsed, state] of halfOpenCases) {
    it(`state ${name}: ${state}`, () => {
      const { clock, breaker } = open();
      clock.advance(elapsed);
      assert.equal(breaker.state(key), state);
    });
  }

  it('half-open lets exactly one probe through', () => {
    const { clock, breaker } = open();
    clock.advance(30_000);
    assert.deepEqual([breaker.allow(key), breaker.allow(key), breaker.allow(key)], [true, false, false]);
  });

  it('refuses while open and while half-open with its probe out, and never takes the probe itself', () => {
    const { clock, breaker } = open();
    assert.equal(breaker.refuses(key), true);
    clock.advance(30_000);
    assert.equal(breaker.refuses(key), false, 'half-open, the probe is due');
    assert.equal(breaker.refuses(key), false, 'asking did not take the probe');
    assert.ok(breaker.allow(key));
    assert.equal(breaker.refuses(key), true, 'the probe is out');
    clock.advance(30_000);
    assert.equal(breaker.refuses(key), false, 'a probe never answered stops blocking');
    assert.equal(new CircuitBreaker({ failureThreshold: 3, openMs: 1, now: () => 0 }).refuses(key), false);
  });

  it('a successful probe closes the circuit', () => {
    const { clock, breaker } = open();
    clock.advance(30_000);
    assert.ok(breaker.allow(key));
    breaker.record(key, true);
    assert.deepEqual([breaker.state(key), breaker.allow(key), breaker.allow(key)], ['closed', true, true]);
  });

  it('a failed probe reopens the circuit for another openMs', () => {
    const { clock, breaker } = open();
    clock.advance(30_000);
    assert.ok(breaker.allow(key));
    breaker.record(key, false);
    assert.deepEqual([breaker.state(key), breaker.allow(key)], ['open', false]);
    clock.advance(29_999);
    assert.equal(breaker.allow(key), false);
    clock.advance(1);
    assert.deepEqual([breaker.state(key), breaker.allow(key), breaker.allow(key)], ['half_open', true, false]);
  });

  it('a probe whose result never comes stops blocking after another openMs', () => {
    const { clock, breaker } = open();
    clock.advance(30_000);
    assert.ok(breaker.allow(key));
    clock.advance(29_999);
    assert.equal(breaker.allow(key), false);
    clock.advance(1);
    assert.deepEqual([breaker.allow(key), breaker.allow(key)], [true, false]);
  });
});

describe('isBreakerFailure: what counts against an endpoint', () => {
  const cases: Array<[AttemptResult, boolean]> = [
    [{ kind: 'error', error: 'timeout', message: '' }, true],
    [{ kind: 'error', error: 'connect', message: '' }, true],
    [{ kind: 'error', error: 'reset', message: '' }, false],
    [{ kind: 'error', error: 'dns', message: '' }, false],
    [{ kind: 'error', error: 'tls', message: '' }, false],
    [{ kind: 'error', error: 'other', message: '' }, false],
    [{ kind: 'response', status: 500, bodyExcerpt: '' }, false],
    [{ kind: 'response', status: 200, bodyExcerpt: '' }, false],
  ];
  for (const [r, expected] of cases) {
    it(`${r.kind === 'error' ? r.error : r.status} → ${expected}`, () => assert.equal(isBreakerFailure(r), expected));
  }
});

describe('breakerKey: one circuit per origin', () => {
  const cases: Array<[string, string]> = [
    ['https://hooks.example/a?x=1', 'https://hooks.example'],
    ['https://hooks.example:443/b', 'https://hooks.example'],
    ['http://hooks.example:8080/c', 'http://hooks.example:8080'],
    ['HTTPS://Hooks.Example/d', 'https://hooks.example'],
    ['not a url', 'not a url'],
  ];
  for (const [url, expected] of cases) it(`${url} → ${expected}`, () => assert.equal(breakerKey(url), expected));
});
