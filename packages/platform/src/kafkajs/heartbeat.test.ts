import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { describe, it } from 'node:test';
import './index.js';
import { beforeRejoining } from './heartbeat.js';

const require = createRequire(import.meta.url);
const { prototype } = require('kafkajs/src/consumer/consumerGroup.js') as { prototype: { heartbeat(this: unknown, options: { interval: number }): Promise<void> } };
const { createErrorFromCode } = require('kafkajs/src/protocol/error.js') as { createErrorFromCode(code: number): Error };
const REBALANCE_IN_PROGRESS = 27;
const UNKNOWN_MEMBER_ID = 25;

/** A group of this id whose heartbeat request fails with this error (kafkajs keeps it under a private symbol). */
function group(groupId: string, error: Error) {
  const target = Object.assign(Object.create(prototype) as object, { groupId, logger: { warn() {}, info() {}, debug() {}, error() {} } });
  const fail = async () => { throw error; };
  return new Proxy(target, { get: (t, key) => (typeof key === 'symbol' && key.description?.includes('sharedHeartbeat') ? fail : Reflect.get(t, key)) });
}

describe('kafkajs rejoin hook', () => {
  it('a heartbeat that learns of a rebalance runs the group\'s hook once, then lets kafkajs rejoin', async () => {
    let runs = 0;
    const unhook = beforeRejoining('g1', async () => { runs++; await new Promise((r) => setTimeout(r, 50)); });
    try {
      const g = group('g1', createErrorFromCode(REBALANCE_IN_PROGRESS));
      const both = [prototype.heartbeat.call(g, { interval: 0 }), prototype.heartbeat.call(g, { interval: 0 })];
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
      await assert.rejects(prototype.heartbeat.call(group('other', createErrorFromCode(REBALANCE_IN_PROGRESS)), { interval: 0 }));
      await assert.rejects(prototype.heartbeat.call(group('g2', createErrorFromCode(UNKNOWN_MEMBER_ID)), { interval: 0 }));
      assert.equal(runs, 0);
    } finally {
      unhook();
    }
  });
});
