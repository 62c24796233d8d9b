import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AssignerProtocol, type Cluster } from '../kafkajs/index.js';
import { stableRoundRobin } from './stable-round-robin.js';

/** A cluster whose metadata lists each topic's partitions in the given order. */
function clusterListing(partitions: Record<string, number[]>): Cluster {
  return { findTopicPartitionMetadata: (topic: string) => partitions[topic]!.map((partitionId) => ({ partitionId })) } as unknown as Cluster;
}

async function assign(partitions: Record<string, number[]>, topics: string[], memberIds: string[]) {
  const assigner = stableRoundRobin({ cluster: clusterListing(partitions), groupId: 'g', logger: undefined as never });
  const result = await assigner.assign({ members: memberIds.map((memberId) => ({ memberId, memberMetadata: Buffer.alloc(0) })), topics });
  return Object.fromEntries(result.map(({ memberId, memberAssignment }) => [memberId, AssignerProtocol.MemberAssignment.decode(memberAssignment)!.assignment]));
}

describe('stableRoundRobin', () => {
  it('the same members get the same partitions whatever order the topics and partitions are listed in', async () => {
    const first = await assign({ a: [0, 1, 2], b: [0, 1, 2] }, ['a', 'b'], ['m1', 'm2', 'm3']);
    const after = await assign({ a: [2, 0, 1], b: [1, 2, 0] }, ['b', 'a'], ['m3', 'm1', 'm2']);
    assert.deepEqual(after, first);
    assert.deepEqual(first, { m1: { a: [0], b: [0] }, m2: { a: [1], b: [1] }, m3: { a: [2], b: [2] } });
  });

  it('every partition once, spread evenly', async () => {
    const got = await assign({ t: [0, 1, 2, 3, 4, 5] }, ['t'], ['x', 'y']);
    assert.deepEqual(got, { x: { t: [0, 2, 4] }, y: { t: [1, 3, 5] } });
  });
});
