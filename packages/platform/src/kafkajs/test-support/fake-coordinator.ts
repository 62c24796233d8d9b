// Stand-ins for the parts of kafkajs's Broker and Cluster the coordinator corrections touch, for
// unit tests without a broker. The real prototypes (patched by install.ts) run against them.
import { createRequire } from 'node:module';
import '../index.js';

const require = createRequire(import.meta.url);

export type FakeBroker = { nodeId: number; [request: string]: unknown };
export const Broker = require('kafkajs/src/broker/index.js') as { prototype: Record<string, (this: unknown, ...args: unknown[]) => Promise<unknown>> };

let current = '';

/** A broker object whose requests answer as `answer` says (kafkajs keeps the real sender under a private symbol). */
export function fakeBroker(nodeId: number, answer: (request: string) => Promise<unknown>): FakeBroker {
  const target = Object.assign(Object.create(Broker.prototype) as object, { nodeId, lookupRequest: () => () => ({}) });
  return new Proxy(target, {
    get: (t, key) => (typeof key === 'symbol' && key.description?.includes('sendRequest') ? () => answer(String(current)) : Reflect.get(t, key)),
  }) as FakeBroker;
}

/** Calls a (patched) request of kafkajs's Broker on a fake broker. */
export const callBroker = (b: FakeBroker, request: string) => { current = request; return Broker.prototype[request]!.call(b, {}); };

/** Just what findGroupCoordinator touches of a Cluster: FindCoordinator answers `coordinator`, findBroker finds its broker. */
export function fakeCluster(brokers: Map<number, FakeBroker>, coordinator: () => number) {
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
