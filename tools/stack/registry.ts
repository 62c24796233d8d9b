// Apicurio Registry (a real Confluent-API-compatible schema registry) on 127.0.0.1, storing its
// schemas in a Kafka topic (KafkaSQL storage), so schema ids survive a registry restart and live
// exactly as long as the broker's data.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { spawnManaged, waitUntil, type ManagedProcess } from './process.js';

export interface RegistryOptions {
  jar: string;
  dir: string;
  port: number;
  brokers: string;
  /** Kafka topic holding the registry's journal. */
  journalTopic?: string;
  heap?: string;
}

export interface RunningRegistry extends ManagedProcess {
  /** Base of the Confluent-compatible API. */
  url: string;
}

export async function startRegistry(opts: RegistryOptions): Promise<RunningRegistry> {
  mkdirSync(opts.dir, { recursive: true });
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
  await waitUntil('schema registry', async () => (await fetch(`${base}/health/ready`)).ok && (await fetch(`${url}/subjects`)).ok, 120_000, proc);
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
