// Correction to kafkajs 2.2.4: the coordinator of a group or transactional id is looked up once,
// not before every request to it.
//
// Defect: Cluster.findGroupCoordinator (src/cluster/index.js) sends FindCoordinator each time it is
// called, and kafkajs calls it before every coordinator request. No upstream issue or pull request
// found (the Java client keeps the coordinator until a request to it fails).
// Before: four FindCoordinator round trips per Kafka transaction (before AddPartitionsToTxn,
// AddOffsetsToTxn, TxnOffsetCommit and EndTxn): 403 FindCoordinator requests for 100 transactions
// of fan-out's and audiences' consume -> produce -> commit, measured against one idle broker.
// After: the answer is kept per client (kafkajs Cluster) and key, and forgotten as soon as a
// request to that broker fails (any error but CONCURRENT_TRANSACTIONS, which says nothing about
// where the coordinator is), or when the broker has left the metadata, so a moved coordinator is
// looked up again on kafkajs's next try, as before.
// Reproduced by: coordinator-cache.test.ts.
// Installed by install.ts: Cluster.prototype.findGroupCoordinator and the coordinator requests of
// Broker.prototype (COORDINATOR_REQUESTS) wrapped.
import { createRequire } from 'node:module';
import { isConcurrentTransactions } from './concurrent-transactions-retry.js';

const require = createRequire(import.meta.url);

/** Broker requests answered by a coordinator (group or transaction): a failure may mean it moved. */
const COORDINATOR_REQUESTS = [
  'joinGroup', 'syncGroup', 'heartbeat', 'leaveGroup', 'offsetCommit', 'offsetFetch', 'describeGroups',
  'initProducerId', 'addPartitionsToTxn', 'addOffsetsToTxn', 'txnOffsetCommit', 'endTxn',
] as const;

interface BrokerInternals { nodeId: number; [key: string]: unknown }
interface FindCoordinatorOptions { groupId: string; coordinatorType?: number }
interface ClusterInternals {
  findGroupCoordinator(options: FindCoordinatorOptions): Promise<BrokerInternals>;
  findBroker(options: { nodeId: number }): Promise<BrokerInternals>;
}

/** The coordinators one kafkajs client (its Cluster) found: `type:key` → node id. */
export class CoordinatorCache {
  private readonly nodes = new Map<string, number>();

  get(key: string): number | undefined {
    return this.nodes.get(key);
  }

  set(key: string, nodeId: number): void {
    this.nodes.set(key, nodeId);
  }

  delete(key: string): void {
    this.nodes.delete(key);
  }

  /** Every coordinator this client had on that node is looked up again. */
  forgetNode(nodeId: number): void {
    for (const [key, node] of this.nodes) if (node === nodeId) this.nodes.delete(key);
  }
}

const caches = new WeakMap<object, CoordinatorCache>();
/** The cache of the client a broker object came from (each kafkajs client has brokers of its own). */
const cacheOfBroker = new WeakMap<object, CoordinatorCache>();
const installed = Symbol.for('switchyard.kafkajs.coordinatorCache');

function cacheOf(cluster: object): CoordinatorCache {
  let cache = caches.get(cluster);
  if (!cache) caches.set(cluster, (cache = new CoordinatorCache()));
  return cache;
}

/** Patches kafkajs's Cluster and Broker (shared by every client of this process). */
export function installCoordinatorCache(): void {
  const Cluster = require('kafkajs/src/cluster/index.js') as { prototype: ClusterInternals & { [installed]?: true } };
  const Broker = require('kafkajs/src/broker/index.js') as { prototype: Record<string, unknown> };
  const cluster = Cluster.prototype;
  if (cluster[installed]) return;
  const { findGroupCoordinator } = cluster;
  const missing = COORDINATOR_REQUESTS.filter((name) => typeof Broker.prototype[name] !== 'function');
  if (typeof findGroupCoordinator !== 'function' || typeof cluster.findBroker !== 'function' || missing.length) {
    throw new Error(`kafkajs Cluster/Broker lack ${missing.join(', ') || 'findGroupCoordinator/findBroker'}: the coordinator cache no longer fits this kafkajs`);
  }

  cluster.findGroupCoordinator = async function (this: ClusterInternals, options) {
    const cache = cacheOf(this);
    const key = `${options.coordinatorType ?? 0}:${options.groupId}`;
    const nodeId = cache.get(key);
    if (nodeId !== undefined) {
      try {
        const broker = await this.findBroker({ nodeId });
        cacheOfBroker.set(broker, cache);
        return broker;
      } catch {
        cache.delete(key); // gone from the metadata: ask which broker it is now
      }
    }
    const broker = await findGroupCoordinator.call(this, options);
    cache.set(key, broker.nodeId);
    cacheOfBroker.set(broker, cache);
    return broker;
  };

  for (const name of COORDINATOR_REQUESTS) {
    const request = Broker.prototype[name] as (this: BrokerInternals, ...args: unknown[]) => Promise<unknown>;
    Broker.prototype[name] = async function (this: BrokerInternals, ...args: unknown[]) {
      try {
        return await request.apply(this, args);
      } catch (err) {
        if (!isConcurrentTransactions(err)) cacheOfBroker.get(this)?.forgetNode(this.nodeId);
        throw err;
      }
    };
  }
  cluster[installed] = true;
}
