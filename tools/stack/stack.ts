// The real infrastructure every run uses: a Kafka broker (or a cluster of them) and a schema
// registry, started from the cached artifacts, or taken from KAFKA_BROKERS / SCHEMA_REGISTRY_URL
// when those point elsewhere.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { ensureArtifacts } from './artifacts.js';
import { startKafka, startKafkaCluster, type KafkaAddress, type RunningKafka } from './kafka.js';
import { startRegistry, type RunningRegistry } from './registry.js';
import { createStackAcls, prepareSecurity, registryAclTable, serviceAclTable, writeClientSettings, type StackSecurity } from './secure.js';
import { userOf } from '@switchyard/platform/kafka/acls';

export interface StackOptions {
  dir: string;
  /** One address: a single broker in dir/kafka. More: a cluster, node i in dir/kafka-i (see layout.ts). */
  kafka: KafkaAddress[];
  registryPort: number;
  log: (line: string) => void;
  env?: NodeJS.ProcessEnv;
  /**
   * Run the broker secured (secure.ts; one node only) and the registry on it as its own principal,
   * with the ACLs of every program for `prefix` and client settings written under dir.
   * `extraUsers`: SCRAM users with no ACLs (tests grant them their own).
   */
  secure?: { prefix: string; extraUsers?: readonly string[] };
}

/** A secured stack's security, and what the stack knows to connect with it. */
export interface SecuredStack extends StackSecurity {
  /** Creates the ACLs of every Switchyard program for another topic prefix. */
  grantAcls(prefix: string): Promise<number>;
}

export interface Stack {
  brokers: string;
  registryUrl: string;
  /** The nodes this stack started (none when KAFKA_BROKERS was given). */
  kafka: RunningKafka[];
  registry: RunningRegistry | undefined;
  /** Set when the stack runs secured. */
  security?: SecuredStack;
  /** Startup times in ms of what this stack started itself. */
  timings: { kafkaMs?: number; registryMs?: number };
  stop(): Promise<void>;
}

export async function startStack({ dir, kafka: addresses, registryPort, log, env = process.env, secure }: StackOptions): Promise<Stack> {
  const external = { brokers: env.KAFKA_BROKERS, registryUrl: env.SCHEMA_REGISTRY_URL };
  if (secure && (external.brokers || external.registryUrl)) throw new Error('the secured stack starts its own broker and registry: unset KAFKA_BROKERS and SCHEMA_REGISTRY_URL');
  if (secure && addresses.length !== 1) throw new Error('the secured stack runs one broker (--secure with --brokers 1)');
  const security = secure ? await prepareSecurity(dir, secure.extraUsers) : undefined;
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
        log(`starting Kafka on 127.0.0.1:${addresses[0]!.port}${security ? ' (SASL_SSL, ACLs)' : ''}`);
        const node = await startKafka({ libs: artifacts!.kafkaLibs, dir: join(dir, 'kafka'), ...addresses[0]!, ...(security ? { security: security.broker } : {}) });
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
      if (security) await createStackAcls(security, brokers, registryAclTable());
      registry = await startRegistry({
        jar: artifacts!.registryJar, dir: join(dir, 'registry'), port: registryPort, brokers,
        ...(security ? { kafkaClient: security.javaClientProperties(userOf('registry')) } : {}),
      });
      timings.registryMs = Date.now() - t0;
      registryUrl = registry.url;
      log(`schema registry ready in ${(timings.registryMs / 1000).toFixed(1)} s`);
    }
    let secured: SecuredStack | undefined;
    if (security && secure) {
      const grantAcls = (prefix: string) => createStackAcls(security, brokers!, serviceAclTable(prefix));
      const granted = await grantAcls(secure.prefix);
      writeClientSettings(security, brokers, registryUrl, secure.prefix);
      log(`ACLs: ${granted} bindings for the programs of topic prefix ${secure.prefix}`);
      secured = { ...security, grantAcls };
    }
    return { brokers, registryUrl, kafka, registry, ...(secured ? { security: secured } : {}), timings, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}
