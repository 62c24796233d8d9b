import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DestinationStates, REFUSING_FRESH_MS, REFUSING_REFRESH_MS } from '@switchyard/platform/holds/destination-states';
import { createLogger } from '@switchyard/platform/logger';
import type { DestinationState } from '@switchyard/platform/schemas/generated';
import { RATE_LIMITED_QUIET_MS, RefusalPublisher } from './refusal-publisher.js';

function publisher() {
  let now = 1_000_000;
  const written: DestinationState[] = [];
  const states = new DestinationStates();
  const refusals = new RefusalPublisher({ states, writer: 'w1', clock: () => now, logger: createLogger({ service: 'test', level: 'silent' }), write: async (s) => { written.push(s); } });
  return { refusals, states, written, advance: (ms: number) => { now += ms; }, now: () => now };
}

const settle = () => new Promise((r) => setImmediate(r));

describe('RefusalPublisher: what fan-out learns of refusing destinations', () => {
  it('refusing once, again only after the refresh interval, and only while every circuit is open', async () => {
    const { refusals, written, advance } = publisher();
    refusals.refusing('d', () => true);
    await settle();
    refusals.refusing('d', () => true);
    await settle();
    assert.deepEqual(written.map((s) => [s.destinationId, s.refusing, s.writer]), [['d', true, 'w1']]);
    advance(REFUSING_REFRESH_MS);
    refusals.refusing('d', () => false);
    await settle();
    assert.equal(written.length, 1, 'not while some circuit is closed');
    refusals.refusing('d', () => true);
    await settle();
    assert.equal(written.length, 2, 'written again after the refresh interval');
  });

  it('answering only for a destination reported refusing (by any instance)', async () => {
    const { refusals, states, written, now } = publisher();
    refusals.answered('d');
    await settle();
    assert.equal(written.length, 0);
    states.apply({ destinationId: 'd', refusing: true, at: now(), writer: 'another', reason: null });
    refusals.answered('d');
    await settle();
    refusals.answered('d');
    await settle();
    assert.deepEqual(written.map((s) => [s.destinationId, s.refusing]), [['d', false]]);
  });

  it('rate-limited: reported with its reason, kept through answers, cleared once a held range runs out with a token to spare and no instance held lately', async () => {
    const { refusals, states, written, advance, now } = publisher();
    refusals.rateLimited('d');
    await settle();
    refusals.rateLimited('d');
    refusals.answered('d');
    await settle();
    assert.deepEqual(written.map((s) => [s.refusing, s.reason]), [[true, 'rate_limited']], 'once, and answers do not clear it');
    assert.equal(states.heldFor('d', now()), 'rate_limited');
    advance(REFUSING_REFRESH_MS);
    refusals.rateLimited('d');
    await settle();
    assert.equal(written.length, 2, 'written again after the refresh interval');
    advance(RATE_LIMITED_QUIET_MS - 1);
    refusals.underLimit('d');
    await settle();
    assert.equal(written.length, 2, 'not while an instance held its work lately');
    advance(1);
    refusals.underLimit('d');
    await settle();
    refusals.underLimit('d');
    await settle();
    assert.deepEqual(written.map((s) => [s.refusing, s.reason]).slice(2), [[false, null]]);
    assert.equal(states.heldFor('d', now()), undefined);
  });

  it('underLimit leaves a destination refusing for its circuits alone; a record without a reason is circuit_open', async () => {
    const { refusals, states, written, now } = publisher();
    states.apply({ destinationId: 'd', refusing: true, at: now(), writer: 'another', reason: null });
    refusals.underLimit('d');
    await settle();
    assert.equal(written.length, 0);
    assert.equal(states.heldFor('d', now()), 'circuit_open');
  });

  it('fan-out holds a destination while its latest state says refusing and is fresh', () => {
    const states = new DestinationStates();
    states.apply({ destinationId: 'd', refusing: true, at: 1000, writer: 'w', reason: null });
    assert.equal(states.refusing('d', 1000 + REFUSING_FRESH_MS - 1), true);
    assert.equal(states.refusing('d', 1000 + REFUSING_FRESH_MS), false, 'stale');
    assert.equal(states.refusing('other', 1000), false);
    states.apply({ destinationId: 'd', refusing: false, at: 2000, writer: 'w', reason: null });
    assert.equal(states.refusing('d', 2000), false);
  });
});
