import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { describe, it } from 'node:test';
import './index.js';
import { fakeBroker, fakeCluster, type FakeBroker } from './test-support/fake-coordinator.js';

const require = createRequire(import.meta.url);
const Cluster = require('kafkajs/src/cluster/index.js') as { prototype: { findGroupCoordinator(this: unknown, o: { groupId: string; coordinatorType?: number }): Promise<FakeBroker> } };
const OffsetManager = require('kafkajs/src/consumer/offsetManager/index.js') as new (options: Record<string, unknown>) => { commitOffsets(offsets: { topics: Array<{ topic: string; partitions: Array<{ partition: number; offset: string }> }> }): Promise<void> };
const { createErrorFromCode } = require('kafkajs/src/protocol/error.js') as { createErrorFromCode(code: number): Error };

describe('kafkajs offset commits and the group coordinator', () => {
  it("a consumer's offset commits follow the coordinator when it moves (kafkajs kept the one its group joined with)", async () => {
    let coordinator = 2;
    const b2 = fakeBroker(2, async () => { if (coordinator !== 2) throw createErrorFromCode(16); return {}; });
    const b1 = fakeBroker(1, async () => ({}));
    const { self, calls } = fakeCluster(new Map([[1, b1], [2, b2]]), () => coordinator);
    // The rest of a Cluster the OffsetManager touches: kafkajs's own, with its map of committed offsets.
    Object.setPrototypeOf(Object.assign(self, { committedOffsetsByGroup: new Map() }), Cluster.prototype);
    const manager = new OffsetManager({
      cluster: self, coordinator: b2, memberAssignment: { t: [0] }, autoCommit: false, topicConfigurations: {},
      instrumentationEmitter: { emit() {} }, groupId: 'delivery', generationId: 1, memberId: 'm',
    });
    const commit = (offset: string) => manager.commitOffsets({ topics: [{ topic: 't', partitions: [{ partition: 0, offset }] }] });
    await commit('5');
    // Broker 2 killed and back, no longer the coordinator: one commit fails, the next finds broker 1.
    coordinator = 1;
    await assert.rejects(commit('6'), (e: Error & { type?: string }) => e.type === 'NOT_COORDINATOR_FOR_GROUP');
    await commit('6');
    await commit('7');
    assert.equal(calls.findCoordinator, 2);
  });
});
