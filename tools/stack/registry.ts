// Apicurio Registry (a real Confluent-API-compatible schema registry) on 127.0.0.1, storing its
// schemas in a Kafka topic (KafkaSQL storage), so schema ids survive a registry restart and live
// exactly as long as the broker's data.
import { chmodSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { REGISTRY_KAFKA_NAMES } from '@switchyard/platform/kafka/acls';
import { spawnManaged, waitUntil, type ManagedProcess } from './process.js';

export interface RegistryOptions {
  jar: string;
  dir: string;
  port: number;
  brokers: string;
  /** Kafka topic holding the registry's journal. */
  journalTopic?: string;
  heap?: string;
  /**
   * Kafka client properties for a secured broker (security.protocol, sasl.*, ssl.truststore.*),
   * given to every Kafka client of the registry through Apicurio's `apicurio.kafka.common.` prefix.
   */
  kafkaClient?: Record<string, string>;
}

export interface RunningRegistry extends ManagedProcess {
  /** Base of the Confluent-compatible API. */
  url: string;
}

export async function startRegistry(opts: RegistryOptions): Promise<RunningRegistry> {
  mkdirSync(opts.dir, { recursive: true });
  writeSecuredKafkaConfig(opts.dir, opts.kafkaClient);
  const proc = await spawnManaged({
    name: 'schema-registry',
    command: 'java',
    args: [`-Xms128m`, `-Xmx${opts.heap ?? '512m'}`, '-XX:+UseG1GC', '-Djava.awt.headless=true', '-jar', opts.jar],
    cwd: opts.dir,
    env: {
      QUARKUS_HTTP_HOST: '127.0.0.1',
      QUARKUS_HTTP_PORT: String(opts.port),
      QUARKUS_LOG_CONSOLE_JSON: 'false',
      QUARKUS_HTTP_ACCESS_LOG_ENABLED: 'false',
      APICURIO_STORAGE_KIND: 'kafkasql',
      APICURIO_KAFKASQL_BOOTSTRAP_SERVERS: opts.brokers,
      APICURIO_KAFKASQL_TOPIC: opts.journalTopic ?? 'kafkasql-journal',
      // The Confluent API answers with global ids, as Confluent's own registry does.
      APICURIO_CCOMPAT_LEGACY_ID_MODE_ENABLED: 'true',
    },
    logFile: join(opts.dir, 'registry.log'),
    pidFile: join(opts.dir, 'registry.pid'),
  });
  const base = `http://127.0.0.1:${opts.port}`;
  const url = `${base}/apis/ccompat/v7`;
  try {
    await waitUntil('schema registry', async () => (await fetch(`${base}/health/ready`)).ok && (await fetch(`${url}/subjects`)).ok, 120_000, proc);
  } catch (err) {
    // Never ready: nobody else holds it to stop it.
    await proc.stop();
    throw err;
  }
  await setGlobalCompatibility(url, 'BACKWARD');
  return { ...proc, url };
}

/**
 * Sets the registry-wide compatibility rule. BACKWARD: a new schema must read data written with
 * the previous one. The schema-registry client checks each subject's level equals the one it
 * registers with, so the global level must be set before the first registration.
 */
export async function setGlobalCompatibility(url: string, level: 'BACKWARD'): Promise<void> {
  const res = await fetch(`${url}/config`, {
    method: 'PUT',
    headers: { 'content-type': 'application/vnd.schemaregistry.v1+json' },
    body: JSON.stringify({ compatibility: level }),
  });
  if (!res.ok) throw new Error(`setting the registry's compatibility to ${level} failed: ${res.status} ${await res.text()}`);
}

/**
 * Apicurio's Kafka clients take any client property under `apicurio.kafka.common.`, read from the
 * configuration by name; environment variables cannot name a property with dots in it
 * (`sasl.jaas.config`), so they go in config/application.properties in the working directory,
 * which Quarkus reads at start-up, mode 0600 (it holds the password). Its consumers' groups are
 * named so that one prefixed ACL covers them. Without kafkaClient the file is removed (a plaintext
 * stack).
 */
function writeSecuredKafkaConfig(dir: string, kafkaClient: Record<string, string> | undefined): void {
  const file = join(dir, 'config', 'application.properties');
  if (!kafkaClient) { rmSync(file, { force: true }); return; }
  mkdirSync(join(dir, 'config'), { recursive: true, mode: 0o700 });
  const escape = (value: string) => value.replace(/\\/g, '\\\\');
  const lines = [
    ...Object.entries(kafkaClient).map(([k, v]) => `apicurio.kafka.common.${k}=${escape(v)}`),
    // Each of its consumers (journal, snapshots) makes a group <prefix><uuid>: two in one group would wait on each other.
    `apicurio.kafkasql.consumer.group-prefix=${REGISTRY_KAFKA_NAMES.groupPrefix}`,
    '',
  ];
  writeFileSync(file, lines.join('\n'), { mode: 0o600 });
  chmodSync(file, 0o600);
}
