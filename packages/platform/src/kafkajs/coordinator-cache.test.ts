import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { describe, it } from 'node:test';
import './index.js';
import { CONCURRENT_TRANSACTIONS_MESSAGE, retryConcurrentTransactions } from './coordinator-cache.js';

const require = createRequire(import.meta.url);
type Broker = { nodeId: number; [request: string]: unknown };
const Cluster = require('kafkajs/src/cluster/index.js') as { prototype: { findGroupCoordinator(this: unknown, o: { groupId: string; coordinatorType?: number }): Promise<Broker> } };
const Broker = require('kafkajs/src/broker/index.js') as { prototype: Record<string, (this: unknown, ...args: unknown[]) => Promise<unknown>> };
const OffsetManager = require('kafkajs/src/consumer/offsetManager/index.js') as new (options: Record<string, unknown>) => { commitOffsets(offsets: { topics: Array<{ topic: string; partitions: Array<{ partition: number; offset: string }> }> }): Promise<void> };
const { createErrorFromCode } = require('kafkajs/src/protocol/error.js') as { createErrorFromCode(code: number): Error };
const { KafkaJSConnectionError } = require('kafkajs/src/errors.js') as Record<string, new (message: string) => Error>;

/** A broker object whose requests answer as `answer` says (kafkajs keeps the real sender under a private symbol). */
function broker(nodeId: number, answer: (request: string) => Promise<unknown>): Broker {
  const target = Object.assign(Object.create(Broker.prototype) as object, { nodeId, lookupRequest: () => () => ({}) });
  return new Proxy(target, {
    get: (t, key) => (typeof key === 'symbol' && key.description?.includes('sendRequest') ? () => answer(String(current)) : Reflect.get(t, key)),
  }) as Broker;
}
let current = '';
/** Calls a (patched) request of kafkajs's Broker on a fake broker. */
const call = (b: Broker, request: string) => { current = request; return Broker.prototype[request]!.call(b, {}); };

/** Just what findGroupCoordinator touches of a Cluster: FindCoordinator answers `coordinator`, findBroker finds its broker. */
function cluster(brokers: Map<number, Broker>, coordinator: () => number) {
  const calls = { findCoordinator: 0 };
  const self = {
    retrier: (fn: (bail: (e: Error) => never) => Promise<unknown>) => fn((e) => { throw e; }),
    findGroupCoordinatorMetadata: async () => { const nodeId = coordinator(); calls.findCoordinator++; return { coordinator: { nodeId } }; },
    findBroker: async ({ nodeId }: { nodeId: number }) => {
      const b = brokers.get(nodeId);
      if (!b) throw new Error(`no broker ${nodeId}`);
      return b;
    },
    refreshMetadata: async () => undefined,
    logger: { debug() {} },
  };
  return { self, calls };
}

describe('kafkajs coordinator lookups', () => {
  it('asks for a coordinator once, not before every request', async () => {
    const b1 = broker(1, async () => ({}));
    const { self, calls } = cluster(new Map([[1, b1]]), () => 1);
    for (let i = 0; i < 5; i++) {
      const found = await Cluster.prototype.findGroupCoordinator.call(self, { groupId: 'fanout-p0', coordinatorType: 1 });
      assert.equal(found, b1);
      await call(found, 'endTxn');
    }
    assert.equal(calls.findCoordinator, 1);
    // Another key (the group coordinator of a transaction's offsets) is a lookup of its own.
    await Cluster.prototype.findGroupCoordinator.call(self, { groupId: 'fanout' });
    assert.equal(calls.findCoordinator, 2);
  });

  it('looks the coordinator up again once a request to it failed (moved, or its broker lost)', async () => {
    let coordinator = 1;
    let fail = false;
    const b1 = broker(1, async () => { if (fail) throw createErrorFromCode(16); return {}; });
    const b2 = broker(2, async () => ({}));
    const { self, calls } = cluster(new Map([[1, b1], [2, b2]]), () => coordinator);
    const find = () => Cluster.prototype.findGroupCoordinator.call(self, { groupId: 'g' });
    assert.equal(await find(), b1);
    coordinator = 2;
    fail = true;
    await assert.rejects(call(await find(), 'heartbeat'), (e: Error & { type?: string }) => e.type === 'NOT_COORDINATOR_FOR_GROUP');
    assert.equal(await find(), b2, 'found again after the failure');
    assert.equal(calls.findCoordinator, 2);

    const lost = broker(3, async () => { throw new KafkaJSConnectionError!('Connection error: connect ECONNREFUSED'); });
    const other = cluster(new Map([[3, lost], [2, b2]]), () => (other.calls.findCoordinator === 0 ? 3 : 2));
    await assert.rejects(call(await Cluster.prototype.findGroupCoordinator.call(other.self, { groupId: 'g' }), 'joinGroup'), /ECONNREFUSED/);
    assert.equal(await Cluster.prototype.findGroupCoordinator.call(other.self, { groupId: 'g' }), b2);
  });

  it('looks it up again when its broker left the metadata', async () => {
    const brokers = new Map([[1, broker(1, async () => ({}))]]);
    let coordinator = 1;
    const { self, calls } = cluster(brokers, () => coordinator);
    await Cluster.prototype.findGroupCoordinator.call(self, { groupId: 'g' });
    brokers.delete(1);
    const b2 = broker(2, async () => ({}));
    brokers.set(2, b2);
    coordinator = 2;
    assert.equal(await Cluster.prototype.findGroupCoordinator.call(self, { groupId: 'g' }), b2);
    assert.equal(calls.findCoordinator, 2);
  });

  it("a consumer's offset commits follow the coordinator when it moves (kafkajs kept the one its group joined with)", async () => {
    let coordinator = 2;
    const b2 = broker(2, async () => { if (coordinator !== 2) throw createErrorFromCode(16); return {}; });
    const b1 = broker(1, async () => ({}));
    const { self, calls } = cluster(new Map([[1, b1], [2, b2]]), () => coordinator);
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

  it('retries AddPartitionsToTxn refused with CONCURRENT_TRANSACTIONS within milliseconds', async () => {
    let refusals = 3;
    const b = broker(1, async () => { if (refusals-- > 0) throw createErrorFromCode(51); return { ok: true }; });
    const started = Date.now();
    assert.deepEqual(await call(b, 'addPartitionsToTxn'), { ok: true });
    assert.ok(Date.now() - started < 150, 'kafkajs alone waited 200-300 ms per refusal');
  });

  it('gives CONCURRENT_TRANSACTIONS back to kafkajs when it persists, and lets any other error through at once', async () => {
    let tries = 0;
    await assert.rejects(retryConcurrentTransactions(async () => { tries++; throw createErrorFromCode(51); }, [1, 1]), (e: Error) => e.message === CONCURRENT_TRANSACTIONS_MESSAGE);
    assert.equal(tries, 3);
    tries = 0;
    await assert.rejects(retryConcurrentTransactions(async () => { tries++; throw createErrorFromCode(47); }, [1, 1]));
    assert.equal(tries, 1);
  });
});
