import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { admit, refusalOf, type Admission, type AdmissionInput, type DestinationView } from './admission.js';
import { COMMIT_STALL_RECHECK_MS } from '@switchyard/platform/consuming/commit-scheduler';
import { WAIT_IN_MEMORY_MS } from './rate-limits.js';

const NOW = 1_000_000;
const HEALTHY: DestinationView = { circuitOpen: false, full: false, stalled: false };

const task = (destination: Partial<DestinationView> = {}, joinable = false): AdmissionInput['record'] =>
  ({ kind: 'task', joinable, destination: { ...HEALTHY, ...destination } });

const input = (over: Partial<AdmissionInput> = {}): AdmissionInput =>
  ({ now: NOW, notBefore: null, membershipUnconfirmed: false, commitsStalled: false, record: task(), ...over });

/** Each row: what delivery knows, and what it must do. */
const CASES: [string, AdmissionInput, Admission][] = [
  ['a healthy destination: sent now', input(), { action: 'dispatch', takesToken: false }],
  ['a task due now (notBefore reached)', input({ notBefore: NOW }), { action: 'dispatch', takesToken: false }],
  ['a tier record not due yet: the partition waits until it is', input({ notBefore: NOW + 4000 }), { action: 'wait', ms: 4000, reason: 'not_due' }],
  ['a range not due yet waits the same way', input({ notBefore: NOW + 10, record: { kind: 'range' } }), { action: 'wait', ms: 10, reason: 'not_due' }],
  ['a due range is released', input({ notBefore: NOW - 1, record: { kind: 'range' } }), { action: 'release_range' }],
  ['membership unconfirmed after a heartbeat: nothing starts, before anything else',
    input({ membershipUnconfirmed: true, notBefore: NOW + 5000, commitsStalled: true, record: task({ circuitOpen: true }) }),
    { action: 'wait', ms: COMMIT_STALL_RECHECK_MS, reason: 'membership_unconfirmed' }],
  ['commits stalled: nothing new starts', input({ commitsStalled: true }), { action: 'wait', ms: COMMIT_STALL_RECHECK_MS, reason: 'commits_stalled' }],
  ['commits stalled holds a due range too', input({ commitsStalled: true, record: { kind: 'range' } }), { action: 'wait', ms: COMMIT_STALL_RECHECK_MS, reason: 'commits_stalled' }],
  ['not due comes before stalled commits', input({ commitsStalled: true, notBefore: NOW + 7 }), { action: 'wait', ms: 7, reason: 'not_due' }],
  ['every circuit open: deferred', input({ record: task({ circuitOpen: true }) }), { action: 'defer', reason: 'circuit_open' }],
  ['every circuit open, fresh from the delivery topic: joins the batch range', input({ record: task({ circuitOpen: true }, true) }), { action: 'join_range', reason: 'circuit_open' }],
  ['circuits open win over a full queue', input({ record: task({ circuitOpen: true, full: true }) }), { action: 'defer', reason: 'circuit_open' }],
  ['full but answering: the partition waits for the destination', input({ record: task({ full: true }) }), { action: 'wait_for_destination' }],
  ['full but answering waits even when the task could join a range', input({ record: task({ full: true }, true) }), { action: 'wait_for_destination' }],
  ['full and stalled: deferred as overloaded', input({ record: task({ full: true, stalled: true }) }), { action: 'defer', reason: 'overloaded' }],
  ['full and stalled, joinable: joins as overloaded', input({ record: task({ full: true, stalled: true }, true) }), { action: 'join_range', reason: 'overloaded' }],
  ['rate limited with a token now: sent, taking it', input({ record: task({ rate: { tokenInMs: 0 } }) }), { action: 'dispatch', takesToken: true }],
  ['rate limited, token within the in-memory wait: waits for it', input({ record: task({ rate: { tokenInMs: 250 } }) }), { action: 'wait_for_token' }],
  ['rate limited, token exactly at the in-memory bound: waits', input({ record: task({ rate: { tokenInMs: WAIT_IN_MEMORY_MS } }) }), { action: 'wait_for_token' }],
  ['rate limited, token beyond the bound: held', input({ record: task({ rate: { tokenInMs: WAIT_IN_MEMORY_MS + 1 } }) }), { action: 'defer', reason: 'rate_limited' }],
  ['a limit of 0: held', input({ record: task({ rate: { tokenInMs: undefined } }) }), { action: 'defer', reason: 'rate_limited' }],
  ['held and joinable: joins the range as rate limited', input({ record: task({ rate: { tokenInMs: undefined } }, true) }), { action: 'join_range', reason: 'rate_limited' }],
  ['refusing comes before the rate limit (no token is taken)', input({ record: task({ circuitOpen: true, rate: { tokenInMs: 0 } }) }), { action: 'defer', reason: 'circuit_open' }],
  ['full and answering comes before the rate limit', input({ record: task({ full: true, rate: { tokenInMs: 0 } }) }), { action: 'wait_for_destination' }],
  ['a joinable task of a healthy destination is sent', input({ record: task({}, true) }), { action: 'dispatch', takesToken: false }],
];

describe('admission', () => {
  for (const [name, given, expected] of CASES) {
    it(name, () => assert.deepEqual(admit(given), expected));
  }

  it('a range takes the same refusal reasons as a task (refusalOf)', () => {
    assert.equal(refusalOf({ circuitOpen: true, full: true, stalled: true }), 'circuit_open');
    assert.equal(refusalOf({ circuitOpen: false, full: true, stalled: true }), 'overloaded');
    assert.equal(refusalOf({ circuitOpen: false, full: true, stalled: false }), undefined);
    assert.equal(refusalOf(HEALTHY), undefined);
  });
});
