// Where the local stack listens and what `npm start` runs: how many Kafka nodes on which ports,
// how many instances of each service on which ports and with which transactional ids. Pure, so
// the choices are tested without starting anything (layout.test.ts).
import type { KafkaAddress } from './kafka.js';

/** Most Kafka nodes `--brokers` accepts: a local cluster is for trying replication, not for size. */
export const MAX_BROKERS = 5;

/**
 * Node i (1-based) listens for clients on firstPort + 2(i − 1) and for its KRaft quorum on the
 * port after: 9092/9093, 9094/9095, 9096/9097. One node keeps the single broker's 9092/9093.
 */
export function kafkaAddresses(count: number, firstPort = 9092): KafkaAddress[] {
  return Array.from({ length: count }, (_, i) => ({ port: firstPort + 2 * i, controllerPort: firstPort + 2 * i + 1 }));
}

/** `--brokers N` (default 1). */
export function parseBrokers(value: string | undefined): number {
  if (value === undefined) return 1;
  const n = Number(value);
  if (!/^\d+$/.test(value) || n < 1 || n > MAX_BROKERS) throw new Error(`--brokers must be a whole number from 1 to ${MAX_BROKERS}, not ${JSON.stringify(value)}`);
  return n;
}

/** The services `--instances` scales; control and setup always run once. */
export const SCALED_SERVICES = ['ingest', 'fanout', 'delivery', 'audiences'] as const;
export type ScaledService = (typeof SCALED_SERVICES)[number];
export type InstanceCounts = Record<ScaledService, number>;

const MAX_INSTANCES = 9;

/**
 * `--instances N` runs N of each scaled service; `--instances fanout=2,delivery=3` names some
 * (the others run once). Default: one of each.
 */
export function parseInstances(value: string | undefined): InstanceCounts {
  const counts: InstanceCounts = { ingest: 1, fanout: 1, delivery: 1, audiences: 1 };
  if (value === undefined) return counts;
  const count = (text: string) => {
    const n = Number(text);
    if (!/^\d+$/.test(text) || n < 1 || n > MAX_INSTANCES) throw new Error(`--instances: a count must be a whole number from 1 to ${MAX_INSTANCES}, not ${JSON.stringify(text)}`);
    return n;
  };
  if (!value.includes('=')) {
    const n = count(value);
    for (const s of SCALED_SERVICES) counts[s] = n;
    return counts;
  }
  for (const part of value.split(',')) {
    const [name = '', n = ''] = part.split('=').map((p) => p.trim());
    if (!(SCALED_SERVICES as readonly string[]).includes(name)) throw new Error(`--instances: ${JSON.stringify(name)} is not one of ${SCALED_SERVICES.join(', ')}`);
    counts[name as ScaledService] = count(n);
  }
  return counts;
}

/** The long-running services, their port variable and default port. */
export const SERVICES = [
  { name: 'control', portVar: 'CONTROL_PORT', port: 8081 },
  { name: 'ingest', portVar: 'INGEST_PORT', port: 8080 },
  { name: 'fanout', portVar: 'FANOUT_PORT', port: 8082 },
  { name: 'delivery', portVar: 'DELIVERY_PORT', port: 8083 },
  { name: 'audiences', portVar: 'AUDIENCES_PORT', port: 8084 },
] as const;

/** Instances are this far apart in ports: fanout 8082, 8182, 8282. */
export const INSTANCE_PORT_STEP = 100;

export interface ServiceInstance {
  service: string;
  /** `fanout` for the first instance, `fanout-2` for the second (log file and messages). */
  name: string;
  port: number;
  /** The instance's own variables: its port. */
  env: Record<string, string>;
}

/**
 * Every process `npm start` runs: control once, each scaled service as often as counts says.
 * Instance k (1-based) listens on the service's port (from env, else its default) + 100(k − 1).
 * Nothing else differs: fan-out's and audiences' transactional ids belong to input partitions, not
 * to instances (ARCHITECTURE.md, "Exactly once across rebalances").
 */
export function serviceInstances(counts: InstanceCounts, env: NodeJS.ProcessEnv = {}): ServiceInstance[] {
  return SERVICES.flatMap((s) => {
    const n = s.name === 'control' ? 1 : counts[s.name];
    const base = Number(env[s.portVar] ?? s.port);
    return Array.from({ length: n }, (_, i) => {
      const port = base + INSTANCE_PORT_STEP * i;
      return {
        service: s.name,
        name: i === 0 ? s.name : `${s.name}-${i + 1}`,
        port,
        env: { [s.portVar]: String(port) },
      };
    });
  });
}
