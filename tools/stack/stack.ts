// The real infrastructure every run uses: a Kafka broker (or a cluster of them) and a schema
// registry, started from the cached artifacts, or taken from KAFKA_BROKERS / SCHEMA_REGISTRY_URL
// when those point elsewhere.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { ensureArtifacts } from './artifacts.js';
import { startKafka, startKafkaCluster, type KafkaAddress, type RunningKafka } from './kafka.js';
import { startRegistry, type RunningRegistry } from './registry.js';

export interface StackOptions {
  dir: string;
  /** One address: a single broker in dir/kafka. More: a cluster, node i in dir/kafka-i (see layout.ts). */
  kafka: KafkaAddress[];
  registryPort: number;
  log: (line: string) => void;
  env?: NodeJS.ProcessEnv;
}

export interface Stack {
  brokers: string;
  registryUrl: string;
  /** The nodes this stack started (none when KAFKA_BROKERS was given). */
  kafka: RunningKafka[];
  registry: RunningRegistry | undefined;
  /** Startup times in ms of what this stack started itself. */
  timings: { kafkaMs?: number; registryMs?: number };
  stop(): Promise<void>;
}

export async function startStack({ dir, kafka: addresses, registryPort, log, env = process.env }: StackOptions): Promise<Stack> {
  const external = { brokers: env.KAFKA_BROKERS, registryUrl: env.SCHEMA_REGISTRY_URL };
  const timings: Stack['timings'] = {};
  const artifacts = external.brokers && external.registryUrl ? undefined : await ensureArtifacts({ log });
  mkdirSync(dir, { recursive: true });

  let kafka: RunningKafka[] = [];
  let stopKafka: () => Promise<void> = async () => {};
  let registry: RunningRegistry | undefined;
  const stop = async () => {
    await registry?.stop();
    await stopKafka();
  };
  try {
    let brokers = external.brokers;
    if (!brokers) {
      const t0 = Date.now();
      if (addresses.length === 1) {
        log(`starting Kafka on 127.0.0.1:${addresses[0]!.port}`);
        const node = await startKafka({ libs: artifacts!.kafkaLibs, dir: join(dir, 'kafka'), ...addresses[0]! });
        kafka = [node];
        stopKafka = () => node.stop();
        brokers = node.brokers;
      } else {
        log(`starting a Kafka cluster of ${addresses.length} nodes (broker+controller each) on ${addresses.map((a) => `127.0.0.1:${a.port}`).join(', ')}`);
        const cluster = await startKafkaCluster({ libs: artifacts!.kafkaLibs, dir, nodes: addresses });
        kafka = cluster.nodes;
        stopKafka = cluster.stop;
        brokers = cluster.brokers;
      }
      timings.kafkaMs = Date.now() - t0;
      log(`Kafka ready in ${(timings.kafkaMs / 1000).toFixed(1)} s`);
    }
    let registryUrl = external.registryUrl;
    if (!registryUrl) {
      const t0 = Date.now();
      log(`starting the schema registry on 127.0.0.1:${registryPort}`);
      registry = await startRegistry({ jar: artifacts!.registryJar, dir: join(dir, 'registry'), port: registryPort, brokers });
      timings.registryMs = Date.now() - t0;
      registryUrl = registry.url;
      log(`schema registry ready in ${(timings.registryMs / 1000).toFixed(1)} s`);
    }
    return { brokers, registryUrl, kafka, registry, timings, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}
