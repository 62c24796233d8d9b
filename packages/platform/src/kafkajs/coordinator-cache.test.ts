import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { describe, it } from 'node:test';
import './index.js';
import { callBroker, fakeBroker, fakeCluster, type FakeBroker } from './test-support/fake-coordinator.js';

const require = createRequire(import.meta.url);
const Cluster = require('kafkajs/src/cluster/index.js') as { prototype: { findGroupCoordinator(this: unknown, o: { groupId: string; coordinatorType?: number }): Promise<FakeBroker> } };
const { createErrorFromCode } = require('kafkajs/src/protocol/error.js') as { createErrorFromCode(code: number): Error };
const { KafkaJSConnectionError } = require('kafkajs/src/errors.js') as Record<string, new (message: string) => Error>;

describe('kafkajs coordinator lookups', () => {
  it('asks for a coordinator once, not before every request', async () => {
    const b1 = fakeBroker(1, async () => ({}));
    const { self, calls } = fakeCluster(new Map([[1, b1]]), () => 1);
    for (let i = 0; i < 5; i++) {
      const found = await Cluster.prototype.findGroupCoordinator.call(self, { groupId: 'fanout-p0', coordinatorType: 1 });
      assert.equal(found, b1);
      await callBroker(found, 'endTxn');
    }
    assert.equal(calls.findCoordinator, 1);
    // Another key (the group coordinator of a transaction's offsets) is a lookup of its own.
    await Cluster.prototype.findGroupCoordinator.call(self, { groupId: 'fanout' });
    assert.equal(calls.findCoordinator, 2);
  });

  it('looks the coordinator up again once a request to it failed (moved, or its broker lost)', async () => {
    let coordinator = 1;
    let fail = false;
    const b1 = fakeBroker(1, async () => { if (fail) throw createErrorFromCode(16); return {}; });
    const b2 = fakeBroker(2, async () => ({}));
    const { self, calls } = fakeCluster(new Map([[1, b1], [2, b2]]), () => coordinator);
    const find = () => Cluster.prototype.findGroupCoordinator.call(self, { groupId: 'g' });
    assert.equal(await find(), b1);
    coordinator = 2;
    fail = true;
    await assert.rejects(callBroker(await find(), 'heartbeat'), (e: Error & { type?: string }) => e.type === 'NOT_COORDINATOR_FOR_GROUP');
    assert.equal(await find(), b2, 'found again after the failure');
    assert.equal(calls.findCoordinator, 2);

    const lost = fakeBroker(3, async () => { throw new KafkaJSConnectionError!('Connection error: connect ECONNREFUSED'); });
    const other = fakeCluster(new Map([[3, lost], [2, b2]]), () => (other.calls.findCoordinator === 0 ? 3 : 2));
    await assert.rejects(callBroker(await Cluster.prototype.findGroupCoordinator.call(other.self, { groupId: 'g' }), 'joinGroup'), /ECONNREFUSED/);
    assert.equal(await Cluster.prototype.findGroupCoordinator.call(other.self, { groupId: 'g' }), b2);
  });

  it('keeps it when a request is refused with CONCURRENT_TRANSACTIONS (the coordinator did not move)', async () => {
    const b1 = fakeBroker(1, async () => { throw createErrorFromCode(51); });
    const { self, calls } = fakeCluster(new Map([[1, b1]]), () => 1);
    const find = () => Cluster.prototype.findGroupCoordinator.call(self, { groupId: 'fanout-p0', coordinatorType: 1 });
    await assert.rejects(callBroker(await find(), 'endTxn'), (e: Error & { type?: string }) => e.type === 'CONCURRENT_TRANSACTIONS');
    assert.equal(await find(), b1);
    assert.equal(calls.findCoordinator, 1);
  });

  it('looks it up again when its broker left the metadata', async () => {
    const brokers = new Map([[1, fakeBroker(1, async () => ({}))]]);
    let coordinator = 1;
    const { self, calls } = fakeCluster(brokers, () => coordinator);
    await Cluster.prototype.findGroupCoordinator.call(self, { groupId: 'g' });
    brokers.delete(1);
    const b2 = fakeBroker(2, async () => ({}));
    brokers.set(2, b2);
    coordinator = 2;
    assert.equal(await Cluster.prototype.findGroupCoordinator.call(self, { groupId: 'g' }), b2);
    assert.equal(calls.findCoordinator, 2);
  });

});
