// Receivers misbehaving while events flow through the HTTP API (RELIABILITY.md): down for a while
// then back, down past the retry deadline, accepting connections and never answering, answering
// byte by byte slower than the delivery timeout, resetting connections. Short retry tiers, a short
// deadline and a 2 s delivery timeout keep it quick (1 s proved too short on the loaded 2-core test
// machine: answers written in time were read late by delivery, timed out and were sent again).
// Every acknowledged event is delivered once the receiver is back, or dead-lettered (reason
// deadline) when it never comes back: 0 lost. The scenarios run at the same time, each with its
// own source, destination and receiver (a misbehaving destination must not hold up the others).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { FaultPipeline } from './support/fault-pipeline.js';
import type { FaultMode, FaultReceiver } from './support/fault-receiver.js';
import { Load, scale, settle } from './support/loss-harness.js';
import { pipelineEnv, setupTopics } from './support/services.js';
import { TimedOutAttempts } from './support/timed-out-attempts.js';
import { uniquePrefix } from './support/stack.js';

const DEADLINE_S = scale(15, 40);
const events = scale(1000, 5000);
const rate = scale(50, 100);
const loadMs = (events / rate) * 1000;
/** The fault lasts from 25 % of the load to 25 % + window, well inside the deadline. */
const windowMs = scale(5000, 15_000);

describe('faults: receivers down, hanging, slow, resetting', { concurrency: true }, () => {
  const prefix = uniquePrefix('faults-rcv');
  let pipeline: FaultPipeline;
  let timedOut: TimedOutAttempts;
  const receivers: FaultReceiver[] = [];

  before(async () => {
    const env = pipelineEnv(prefix, {
      SWITCHYARD_ALLOWED_CIDRS: '127.0.0.0/8', SWITCHYARD_RETRY_TIERS: '500ms,1s,2s', SWITCHYARD_RETRY_DEADLINE: `${DEADLINE_S}s`,
      DELIVERY_TIMEOUT: '2s', DELIVERY_BREAKER_OPEN: '1s', LOG_LEVEL: process.env.FAULTS_LOG_LEVEL ?? 'warn',
    });
    await setupTopics(env);
    pipeline = new FaultPipeline(prefix, env);
    await pipeline.start(['ingest', 'fanout', 'delivery']);
    timedOut = await TimedOutAttempts.follow(pipeline.topics.deliveryAttempts);
  });
  after(async () => {
    await timedOut?.stop();
    await pipeline?.stop();
    await Promise.all(receivers.map((r) => r.close()));
  });

  const run = async (name: string, mode: FaultMode, opts: { slowByteMs?: number; forever?: boolean } = {}) => {
    const label = name.replace(/\W+/g, '-');
    const { destination, receiver, source } = await pipeline.scenario(label, { slowByteMs: opts.slowByteMs });
    receivers.push(receiver);
    const startedAt = Date.now();
    const load = new Load({ label, target: () => pipeline.ingestUrl, writeKey: source.writeKeys[0]!, events, ratePerSec: rate }).start();
    if (opts.forever) {
      await receiver.setMode(mode);
    } else {
      await sleep(loadMs * 0.25);
      await receiver.setMode(mode);
      await sleep(windowMs);
      await receiver.setMode('ok');
    }
    const tally = await settle({ scenario: name, load, receiver, destinationId: destination.id, deadLetterTopic: pipeline.topics.deadLetter, startedAt, timeoutMs: loadMs + DEADLINE_S * 1000 + 60_000 });
    assert.equal(tally.lost, 0, `lost: ${tally.lostSample.join(', ')}`);
    assert.equal(tally.acknowledged, tally.sent);
    // A copy that followed an attempt of the same event that delivery timed out is at least once
    // at work (timed-out-attempts.ts), whether the fault or a starved machine made the timeout.
    // The rest, copies of events that no attempt timed out, are bounded.
    const afterTimeout = timedOut.excused(destination.id, load.ids, (id) => receiver.deliveredCount(id));
    if (tally.duplicated) console.log(`#   ${name}: ${tally.duplicated} duplicates; ${afterTimeout} of them after an attempt of the same event that timed out`);
    assert.ok(tally.duplicated - afterTimeout <= tally.acknowledged * 0.01, `${tally.duplicated} duplicates, ${afterTimeout} of them after an attempt of the same event that timed out`);
    return { tally, receiver };
  };

  it(`a receiver down for ${windowMs / 1000} s, then back: everything delivered before the ${DEADLINE_S} s deadline`, async () => {
    const { tally } = await run(`receiver down ${windowMs / 1000} s, then back`, 'down');
    assert.deepEqual([tally.delivered, tally.deadLettered], [tally.acknowledged, 0]);
  });

  it(`a receiver down past the ${DEADLINE_S} s deadline: everything dead-lettered (deadline), nothing lost`, async () => {
    const { tally, receiver } = await run('receiver down past the deadline', 'down', { forever: true });
    assert.equal(tally.deadLettered, tally.acknowledged);
    assert.deepEqual(tally.deadLetterReasons, { deadline: tally.acknowledged });
    await receiver.setMode('ok');
  });

  it('a receiver that accepts connections and never answers (2 s timeout), then recovers: everything delivered', async () => {
    const { tally } = await run(`receiver hangs ${windowMs / 1000} s`, 'hang');
    assert.equal(tally.delivered, tally.acknowledged);
  });

  it('a receiver answering byte by byte (3.2 s per answer, over the 2 s timeout), then recovers: everything delivered', async () => {
    const { tally } = await run(`receiver answers byte by byte ${windowMs / 1000} s`, 'slow', { slowByteMs: 100 });
    assert.equal(tally.delivered, tally.acknowledged);
  });

  it('a receiver resetting every connection, then recovers: everything delivered', async () => {
    const { tally } = await run(`receiver resets connections ${windowMs / 1000} s`, 'reset');
    assert.equal(tally.delivered, tally.acknowledged);
  });
});
