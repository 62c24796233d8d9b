// Correction to kafkajs 2.2.4: a consumer's offset commits and fetches follow the group coordinator
// when it moves.
//
// Defect: OffsetManager.getCoordinator (src/consumer/offsetManager/index.js) goes to the
// coordinator the group joined with, for the whole generation: it reconnects to the same node id
// and, told NOT_COORDINATOR, only refreshes the metadata. No upstream issue or pull request found.
// Before: when that broker was killed and came back no longer the coordinator, every manual commit
// of delivery failed until the next rebalance, which did not come (the heartbeat went to the new
// coordinator): its partitions stalled (test/faults-cluster.test.ts, "SIGKILL of the active KRaft
// controller"; RELIABILITY.md).
// After: the OffsetManager asks the cluster for the group's coordinator before each request, as
// every other coordinator request does; with coordinator-cache.ts that costs no round trip while
// the coordinator stays, and a failed commit makes the next one look the coordinator up again.
// Reproduced by: offset-manager-coordinator.test.ts; in a cluster by test/faults-cluster.test.ts.
// Installed by install.ts: OffsetManager.prototype.getCoordinator replaced (after coordinator-cache.ts,
// which it relies on to stay cheap, not to be correct).
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

interface OffsetManagerInternals {
  cluster: { findGroupCoordinator(options: { groupId: string }): Promise<unknown> };
  groupId: string;
  getCoordinator(): Promise<unknown>;
}

const installed = Symbol.for('switchyard.kafkajs.offsetManagerCoordinator');

/** Patches kafkajs's OffsetManager (shared by every consumer of this process). */
export function installOffsetManagerCoordinator(): void {
  const OffsetManager = require('kafkajs/src/consumer/offsetManager/index.js') as { prototype: OffsetManagerInternals & { [installed]?: true } };
  const { prototype } = OffsetManager;
  if (prototype[installed]) return;
  if (typeof prototype.getCoordinator !== 'function') {
    throw new Error('kafkajs OffsetManager has no getCoordinator: the offset manager coordinator correction no longer fits this kafkajs');
  }
  prototype.getCoordinator = function (this: OffsetManagerInternals) {
    return this.cluster.findGroupCoordinator({ groupId: this.groupId });
  };
  prototype[installed] = true;
}
