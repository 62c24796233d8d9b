// kafkajs's round-robin assigner deals partitions out in the order the topics were subscribed and
// the broker listed their partitions, and a broker lists them in a different order after leaders
// move. So the same members got different partitions after a rebalance that changed nothing about
// them (a group coordinator lost and found again): every moved partition was read by its new owner
// from the group's committed offset and its uncommitted work was sent again (a cluster-suite broker
// kill: all three delivery members' partitions reshuffled, 809 tasks re-sent). This one deals them
// out in a fixed order (topics by name, partitions by number), so the same members always get the
// same partitions, and a member that keeps its partitions sends nothing twice.
import { AssignerProtocol, type PartitionAssigner } from '../kafkajs/index.js';

export const stableRoundRobin: PartitionAssigner = ({ cluster }) => ({
  // The name and metadata of kafkajs's RoundRobinAssigner: members running either one form one
  // group during a rolling upgrade (a group needs a protocol every member supports).
  name: 'RoundRobinAssigner',
  version: 0,
  async assign({ members, topics }) {
    const memberIds = members.map(({ memberId }) => memberId).sort();
    const slots = [...topics].sort().flatMap((topic) =>
      cluster.findTopicPartitionMetadata(topic).map(({ partitionId }) => partitionId).sort((a, b) => a - b).map((partition) => ({ topic, partition })));
    const assignment = new Map<string, Record<string, number[]>>();
    slots.forEach(({ topic, partition }, i) => {
      const memberId = memberIds[i % memberIds.length]!;
      let topics = assignment.get(memberId);
      if (!topics) assignment.set(memberId, (topics = {}));
      (topics[topic] ??= []).push(partition);
    });
    return [...assignment].map(([memberId, byTopic]) => ({
      memberId,
      memberAssignment: AssignerProtocol.MemberAssignment.encode({ version: 0, assignment: byTopic, userData: Buffer.alloc(0) }),
    }));
  },
  protocol({ topics }) {
    return { name: 'RoundRobinAssigner', metadata: AssignerProtocol.MemberMetadata.encode({ version: 0, topics, userData: Buffer.alloc(0) }) };
  },
});
