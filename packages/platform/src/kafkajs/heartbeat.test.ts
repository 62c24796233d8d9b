import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { describe, it } from 'node:test';
import { searchLimitMs } from './heartbeat.js';
import { beforeRejoining } from './index.js';

const require = createRequire(import.meta.url);
const { prototype } = require('kafkajs/src/consumer/consumerGroup.js') as { prototype: { heartbeat(this: unknown, options: { interval: number }): Promise<void> } };
const { createErrorFromCode } = require('kafkajs/src/protocol/error.js') as { createErrorFromCode(code: number): Error };
const { KafkaJSConnectionError, KafkaJSError } = require('kafkajs/src/errors.js') as Record<string, new (message: string, extra?: object) => Error>;
const REBALANCE_IN_PROGRESS = 27;
const UNKNOWN_MEMBER_ID = 25;

const NOT_COORDINATOR = 16;
const GROUP_LOAD_IN_PROGRESS = 14;
const unreachable = () => new KafkaJSConnectionError!('Connection error: connect ECONNREFUSED 127.0.0.1:1', { broker: '127.0.0.1:1', code: 'ECONNREFUSED' });

/**
 * A group of this id whose heartbeat requests answer `answers` in turn (an Error fails it, the
 * last answer repeats; kafkajs keeps the request under a private symbol), with a coordinator
 * lookup that counts its calls and a short session timeout.
 */
function group(groupId: string, ...answers: (Error | 'ok')[]) {
  const warnings: string[] = [];
  const lookups: number[] = [];
  let sent = 0;
  const cluster = { findGroupCoordinator: async () => { lookups.push(Date.now()); return { nodeId: lookups.length }; } };
  const target = Object.assign(Object.create(prototype) as object, { groupId, memberId: 'm', sessionTimeout: 10_000, searchLimitMs: 600, cluster, coordinator: { nodeId: 0 }, logger: { warn: (message: string) => warnings.push(message), info() {}, debug() {}, error() {} } });
  const request = async () => {
    const answer = answers[Math.min(sent++, answers.length - 1)]!;
    if (answer !== 'ok') throw answer;
  };
  const self = new Proxy(target, { get: (t, key) => (typeof key === 'symbol' && key.description?.includes('sharedHeartbeat') ? request : Reflect.get(t, key)) });
  return { self, warnings, lookups, sent: () => sent, coordinator: () => (target as { coordinator: unknown }).coordinator };
}

describe('kafkajs heartbeat: a coordinator that moved or cannot be reached', () => {
  it('a heartbeat that cannot reach the coordinator finds it again and heartbeats there: no crash, no rejoin', async () => {
    const g = group('g', unreachable(), 'ok');
    await prototype.heartbeat.call(g.self, { interval: 0 });
    assert.equal(g.lookups.length, 1);
    assert.deepEqual(g.coordinator(), { nodeId: 1 });
    assert.equal(g.sent(), 2);
    assert.equal(g.warnings.length, 1);
  });

  it('NOT_COORDINATOR, then a coordinator still loading the group: looked for again until one answers', async () => {
    const g = group('g', createErrorFromCode(NOT_COORDINATOR), createErrorFromCode(GROUP_LOAD_IN_PROGRESS), 'ok');
    await prototype.heartbeat.call(g.self, { interval: 0 });
    assert.equal(g.lookups.length, 2);
    assert.equal(g.sent(), 3);
  });

  it('heartbeats that fail together share one search', async () => {
    const g = group('g', createErrorFromCode(NOT_COORDINATOR), createErrorFromCode(NOT_COORDINATOR), 'ok');
    await Promise.all([prototype.heartbeat.call(g.self, { interval: 0 }), prototype.heartbeat.call(g.self, { interval: 0 })]);
    assert.equal(g.lookups.length, 1);
  });

  it('the search outlasts a session: a new coordinator gives every member a full one from when it loads the group', () => {
    assert.equal(searchLimitMs(10_000), 30_000);
    assert.equal(searchLimitMs(30_000), 60_000);
  });

  it('no coordinator within the search limit: NOT_COORDINATOR, on which kafkajs rejoins as the same member', async () => {
    const g = group('g', unreachable());
    const started = Date.now();
    await assert.rejects(prototype.heartbeat.call(g.self, { interval: 0 }), (err: Error & { type?: string }) => err.type === 'NOT_COORDINATOR_FOR_GROUP');
    assert.ok(Date.now() - started >= 500, 'it looked for the length of the search limit');
    assert.ok(g.lookups.length >= 1);
  });

  it('an answer that is not about the coordinator goes to kafkajs as it is', async () => {
    await assert.rejects(prototype.heartbeat.call(group('g', new KafkaJSError!('The group is rebalancing')).self, { interval: 0 }), /rebalancing/);
    const g = group('g', createErrorFromCode(NOT_COORDINATOR), createErrorFromCode(UNKNOWN_MEMBER_ID));
    await assert.rejects(prototype.heartbeat.call(g.self, { interval: 0 }), (err: Error & { type?: string }) => err.type === 'UNKNOWN_MEMBER_ID');
  });
});

describe('kafkajs heartbeat: a hook before rejoining a rebalancing group', () => {
  it('a heartbeat that learns of a rebalance runs the group\'s hook once, then lets kafkajs rejoin', async () => {
    let runs = 0;
    const unhook = beforeRejoining('g1', async () => { runs++; await new Promise((r) => setTimeout(r, 50)); });
    try {
      const { self } = group('g1', createErrorFromCode(REBALANCE_IN_PROGRESS));
      const both = [prototype.heartbeat.call(self, { interval: 0 }), prototype.heartbeat.call(self, { interval: 0 })];
      for (const call of both) await assert.rejects(call, (err: Error & { type?: string }) => err.type === 'REBALANCE_IN_PROGRESS');
      assert.equal(runs, 1);
    } finally {
      unhook();
    }
  });

  it('not for another group, nor for an expelled member (its commits are refused anyway)', async () => {
    let runs = 0;
    const unhook = beforeRejoining('g2', async () => { runs++; });
    try {
      await assert.rejects(prototype.heartbeat.call(group('other', createErrorFromCode(REBALANCE_IN_PROGRESS)).self, { interval: 0 }));
      await assert.rejects(prototype.heartbeat.call(group('g2', createErrorFromCode(UNKNOWN_MEMBER_ID)).self, { interval: 0 }));
      assert.equal(runs, 0);
    } finally {
      unhook();
    }
  });

  it('a rebalance learnt from the coordinator found again runs the hook, then goes to kafkajs', async () => {
    let runs = 0;
    const unhook = beforeRejoining('g4', async () => { runs++; });
    try {
      await assert.rejects(prototype.heartbeat.call(group('g4', createErrorFromCode(NOT_COORDINATOR), createErrorFromCode(REBALANCE_IN_PROGRESS)).self, { interval: 0 }), (err: Error & { type?: string }) => err.type === 'REBALANCE_IN_PROGRESS');
      assert.equal(runs, 1);
    } finally {
      unhook();
    }
  });

  it('a coordinator that cannot be reached is not a rebalance: no hook', async () => {
    let runs = 0;
    const unhook = beforeRejoining('g3', async () => { runs++; });
    try {
      await assert.rejects(prototype.heartbeat.call(group('g3', new KafkaJSConnectionError!('Connection error', { broker: '127.0.0.1:1' })).self, { interval: 0 }));
      assert.equal(runs, 0);
    } finally {
      unhook();
    }
  });
});
