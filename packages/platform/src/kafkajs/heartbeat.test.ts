import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { describe, it } from 'node:test';
import { beforeRejoining } from './index.js';

const require = createRequire(import.meta.url);
const { prototype } = require('kafkajs/src/consumer/consumerGroup.js') as { prototype: { heartbeat(this: unknown, options: { interval: number }): Promise<void> } };
const { createErrorFromCode } = require('kafkajs/src/protocol/error.js') as { createErrorFromCode(code: number): Error };
const { KafkaJSConnectionError, KafkaJSError } = require('kafkajs/src/errors.js') as Record<string, new (message: string, extra?: object) => Error>;
const REBALANCE_IN_PROGRESS = 27;
const UNKNOWN_MEMBER_ID = 25;

/** A group of this id whose heartbeat request fails with this error (kafkajs keeps it under a private symbol). */
function group(groupId: string, error: Error) {
  const warnings: string[] = [];
  const target = Object.assign(Object.create(prototype) as object, { groupId, logger: { warn: (message: string) => warnings.push(message), info() {}, debug() {}, error() {} } });
  const fail = async () => { throw error; };
  const self = new Proxy(target, { get: (t, key) => (typeof key === 'symbol' && key.description?.includes('sharedHeartbeat') ? fail : Reflect.get(t, key)) });
  return { self, warnings };
}

describe('kafkajs heartbeat: a coordinator that cannot be reached', () => {
  it('a heartbeat that cannot reach the coordinator asks kafkajs to find it again and rejoin (same member), not to crash', async () => {
    const { self, warnings } = group('g', new KafkaJSConnectionError!('Connection error: connect ECONNREFUSED 127.0.0.1:1', { broker: '127.0.0.1:1', code: 'ECONNREFUSED' }));
    await assert.rejects(prototype.heartbeat.call(self, { interval: 0 }), (err: Error & { type?: string }) => err.type === 'NOT_COORDINATOR_FOR_GROUP');
    assert.equal(warnings.length, 1);
    const other = group('g', new KafkaJSError!('The group is rebalancing'));
    await assert.rejects(prototype.heartbeat.call(other.self, { interval: 0 }), /rebalancing/);
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
