// What kafkajs costs every Kafka transaction (fan-out's and audiences' consume → produce → commit),
// measured against one idle broker (BENCHMARKS.md, change 13):
//
// - It asks for the coordinator before every coordinator request: a FindCoordinator round trip
//   before AddPartitionsToTxn, AddOffsetsToTxn, TxnOffsetCommit and EndTxn, four per transaction
//   (403 FindCoordinator requests for 100 transactions). Here the answer is kept per client and
//   key, and forgotten as soon as a request to that broker fails, so a moved coordinator is looked
//   up again on kafkajs's next try, as before.
// - A transaction started right after the previous one's commit is refused with
//   CONCURRENT_TRANSACTIONS while the coordinator still writes that commit's markers (47 of 150
//   back-to-back transactions, a few even 200 ms apart), and kafkajs retries the whole send after
//   its client's retry time: 200-300 ms by default, 10 ms and up for the exactly-once stages'
//   transactional client (pipeline.ts, TRANSACTION_RETRY). Here the refused request alone is tried
//   again from 2 ms, as the Java client does, before kafkajs's own retry takes over.
// - A consumer's offset commits and fetches go to the coordinator its group joined with, for the
//   whole generation: kafkajs's OffsetManager reconnects to the same node id and, told
//   NOT_COORDINATOR, only refreshes the metadata. When that broker was killed and came back no
//   longer the coordinator, every manual commit of delivery failed until the next rebalance, which
//   did not come (the heartbeat went elsewhere): its partitions stalled (the cluster fault suite,
//   "SIGKILL of the active KRaft controller"). Here they ask the cache, like every other
//   coordinator request, so a failed commit makes the next one look the coordinator up again.
import { createRequire } from 'node:module';
import { setTimeout as sleep } from 'node:timers/promises';

const require = createRequire(import.meta.url);

/**
 * The text of kafkajs's CONCURRENT_TRANSACTIONS error (the coordinator is still completing this id's
 * previous transaction). kafkajs logs every such answer as an error; retried here, it is routine
 * (kafka/client.ts logs it at debug).
 */
export const CONCURRENT_TRANSACTIONS_MESSAGE = (require('kafkajs/src/protocol/error.js') as { createErrorFromCode(code: number): Error }).createErrorFromCode(51).message;
/** Waits between quick tries of a refused AddPartitionsToTxn / AddOffsetsToTxn; after them kafkajs's own retry takes over. */
const CONCURRENT_RETRY_MS = [2, 5, 10, 20, 20, 50, 50, 100, 100, 200, 200];

/** Broker requests answered by a coordinator (group or transaction): a failure may mean it moved. */
const COORDINATOR_REQUESTS = [
  'joinGroup', 'syncGroup', 'heartbeat', 'leaveGroup', 'offsetCommit', 'offsetFetch', 'describeGroups',
  'initProducerId', 'addPartitionsToTxn', 'addOffsetsToTxn', 'txnOffsetCommit', 'endTxn',
] as const;

interface BrokerInternals { nodeId: number; [key: string]: unknown }
interface FindCoordinatorOptions { groupId: string; coordinatorType?: number }
interface OffsetManagerInternals {
  cluster: ClusterInternals;
  groupId: string;
  getCoordinator(): Promise<BrokerInternals>;
}
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
const installed = Symbol.for('switchyard.kafkajs.coordinators');

function cacheOf(cluster: object): CoordinatorCache {
  let cache = caches.get(cluster);
  if (!cache) caches.set(cluster, (cache = new CoordinatorCache()));
  return cache;
}

function isConcurrentTransactions(err: unknown): boolean {
  return (err as { type?: string }).type === 'CONCURRENT_TRANSACTIONS';
}

/** Retries a request the coordinator refused with CONCURRENT_TRANSACTIONS, quickly, then lets the error through. */
export async function retryConcurrentTransactions<T>(send: () => Promise<T>, waits: readonly number[] = CONCURRENT_RETRY_MS): Promise<T> {
  for (let i = 0; ; i++) {
    try {
      return await send();
    } catch (err) {
      if (!isConcurrentTransactions(err) || i >= waits.length) throw err;
      await sleep(waits[i]!);
    }
  }
}

/** Patches kafkajs's Cluster and Broker (shared by every client of this process). */
export function installCoordinatorCache(): void {
  const Cluster = require('kafkajs/src/cluster/index.js') as { prototype: ClusterInternals & { [installed]?: true } };
  const Broker = require('kafkajs/src/broker/index.js') as { prototype: Record<string, unknown> };
  const OffsetManager = require('kafkajs/src/consumer/offsetManager/index.js') as { prototype: OffsetManagerInternals };
  const cluster = Cluster.prototype;
  if (cluster[installed]) return;
  const { findGroupCoordinator } = cluster;
  const missing = COORDINATOR_REQUESTS.filter((name) => typeof Broker.prototype[name] !== 'function');
  if (typeof findGroupCoordinator !== 'function' || typeof cluster.findBroker !== 'function' || typeof OffsetManager.prototype.getCoordinator !== 'function' || missing.length) {
    throw new Error(`kafkajs Cluster/Broker/OffsetManager lack ${missing.join(', ') || 'findGroupCoordinator/findBroker/OffsetManager.getCoordinator'}: the coordinator cache no longer fits this kafkajs`);
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
    const quickRetry = name === 'addPartitionsToTxn' || name === 'addOffsetsToTxn';
    Broker.prototype[name] = async function (this: BrokerInternals, ...args: unknown[]) {
      try {
        return quickRetry ? await retryConcurrentTransactions(() => request.apply(this, args)) : await request.apply(this, args);
      } catch (err) {
        if (!isConcurrentTransactions(err)) cacheOfBroker.get(this)?.forgetNode(this.nodeId);
        throw err;
      }
    };
  }
  OffsetManager.prototype.getCoordinator = function (this: OffsetManagerInternals) {
    return this.cluster.findGroupCoordinator({ groupId: this.groupId });
  };
  cluster[installed] = true;
}
