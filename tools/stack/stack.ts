// The real infrastructure every run uses: a Kafka broker and a schema registry, started from the
// cached artifacts, or taken from KAFKA_BROKERS / SCHEMA_REGISTRY_URL when those point elsewhere.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { ensureArtifacts } from './artifacts.js';
import { startKafka, type RunningKafka } from './kafka.js';
import { startRegistry, type RunningRegistry } from './registry.js';

export interface StackOptions {
  dir: string;
  kafkaPort: number;
  controllerPort: number;
  registryPort: number;
  log: (line: string) => void;
  env?: NodeJS.ProcessEnv;
}

export interface Stack {
  brokers: string;
  registryUrl: string;
  kafka: RunningKafka | undefined;
  registry: RunningRegistry | undefined;
  /** Startup times in ms of what this stack started itself. */
  timings: { kafkaMs?: number; registryMs?: number };
  stop(): Promise<void>;
}

export async function startStack({ dir, kafkaPort, controllerPort, registryPort, log, env = process.env }: StackOptions): Promise<Stack> {
  const external = { brokers: env.KAFKA_BROKERS, registryUrl: env.SCHEMA_REGISTRY_URL };
  const timings: Stack['timings'] = {};
  const artifacts = external.brokers && external.registryUrl ? undefined : await ensureArtifacts({ log });
  mkdirSync(dir, { recursive: true });

  let kafka: RunningKafka | undefined;
  let registry: RunningRegistry | undefined;
  const stop = async () => {
    await registry?.stop();
    await kafka?.stop();
  };
  try {
    let brokers = external.brokers;
    if (!brokers) {
      const t0 = Date.now();
      log(`starting Kafka on 127.0.0.1:${kafkaPort}`);
      kafka = await startKafka({ libs: artifacts!.kafkaLibs, dir: join(dir, 'kafka'), port: kafkaPort, controllerPort });
      timings.kafkaMs = Date.now() - t0;
      brokers = kafka.brokers;
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
