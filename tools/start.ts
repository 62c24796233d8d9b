// npm start [-- --brokers 3] [--instances 2 | --instances fanout=2,delivery=2] [--secure] [--dir DIR]: the whole
// pipeline on this machine. Starts (or reuses, via KAFKA_BROKERS / SCHEMA_REGISTRY_URL) Kafka — one
// broker, or a cluster — and the schema registry, creates the topics, registers the schemas, starts
// every service (some several times), prints `ready` once all of them are, and stops everything on
// Ctrl-C, SIGTERM or SIGHUP, on a failure, or when npm goes away (stack/shutdown.ts). --secure: one
// broker on SASL_SSL with ACLs, every program as its own principal (stack/secure.ts; data in
// .switchyard/secure). --dir: data and logs there instead of .switchyard/.
import { randomBytes } from 'node:crypto';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { startReceiver } from './demo/receiver.js';
import { replicationFor } from './stack/kafka.js';
import { kafkaAddresses, parseBrokers, parseInstances, serviceInstances } from './stack/layout.js';
import { repoRoot } from './stack/paths.js';
import { installShutdown } from './stack/shutdown.js';
import { startStack, type Stack } from './stack/stack.js';
import { connectionSummary } from './stack/secure.js';
import { userOf, type AclRole } from '@switchyard/platform/kafka/acls';
import { runOnce, spawnService, waitForHttp, type ServiceProcess } from './stack/services.js';

const log = (line: string) => console.log(`[switchyard] ${line}`);

let options: { brokers: number; counts: ReturnType<typeof parseInstances>; kafkaPort: number; registryPort: number; secure: boolean; dir: string };
try {
  const { values } = parseArgs({ options: { brokers: { type: 'string' }, instances: { type: 'string' }, 'kafka-port': { type: 'string' }, 'registry-port': { type: 'string' }, secure: { type: 'boolean', default: false }, dir: { type: 'string' } } });
  options = {
    brokers: parseBrokers(values.brokers), counts: parseInstances(values.instances), kafkaPort: Number(values['kafka-port'] ?? 9092), registryPort: Number(values['registry-port'] ?? 8085), secure: values.secure,
    dir: values.dir ? resolve(values.dir) : join(repoRoot, '.switchyard'),
  };
} catch (err) {
  console.error(`[switchyard] ${(err as Error).message}\nusage: npm start -- [--brokers N] [--instances N | --instances fanout=2,delivery=2] [--kafka-port 9092] [--registry-port 8085] [--secure] [--dir .switchyard]`);
  process.exit(2);
}
// Data (broker, registry) and logs; another directory runs a second stack beside this checkout's own (its pid files are per directory).
const dir = options.dir;
const logs = join(dir, 'logs');
const services = serviceInstances(options.counts, process.env);

const started: ServiceProcess[] = [];
let stack: Stack | undefined;
// Ctrl-C is how this command ends: exit 0 after a signal. Services first, then the stack they use.
const shutdown = installShutdown({ log, signalExitCode: () => 0 });
shutdown.onStop('the stack', async () => { await stack?.stop(); log('stopped'); });
shutdown.onStop('the services', () => Promise.all(started.map((s) => s.stop('SIGTERM'))));

try {
  const t0 = Date.now();
  const prefix = process.env.SWITCHYARD_TOPIC_PREFIX || 'switchyard.';
  stack = await startStack({
    dir: options.secure ? join(dir, 'secure') : dir, kafka: kafkaAddresses(options.brokers, options.kafkaPort), registryPort: options.registryPort, log,
    ...(options.secure ? { secure: { prefix } } : {}),
  });
  // Secured: each program connects as its own principal (the password by file).
  const security = stack.security;
  const as = (role: AclRole): NodeJS.ProcessEnv => (security ? security.env(userOf(role), stack!.brokers) : {});
  const adminToken = process.env.SWITCHYARD_ADMIN_TOKEN || randomBytes(24).toString('base64url');
  const demo = {
    DEMO_WRITE_KEY: process.env.DEMO_WRITE_KEY || 'demo-write-key',
    DEMO_SHARED_SECRET: process.env.DEMO_SHARED_SECRET || 'demo-shared-secret',
    DEMO_RECEIVER_PORT: process.env.DEMO_RECEIVER_PORT || '8090',
  };
  const env: NodeJS.ProcessEnv = {
    KAFKA_BROKERS: stack.brokers,
    SCHEMA_REGISTRY_URL: stack.registryUrl,
    LOG_LEVEL: process.env.LOG_LEVEL ?? 'info',
    SWITCHYARD_ADMIN_TOKEN: adminToken,
    // The demo receiver listens on 127.0.0.1, which the SSRF guard refuses unless allow-listed.
    SWITCHYARD_ALLOWED_CIDRS: process.env.SWITCHYARD_ALLOWED_CIDRS ?? '127.0.0.0/8',
    SWITCHYARD_SEED_FILE: process.env.SWITCHYARD_SEED_FILE ?? join(repoRoot, 'tools/demo/seed.yaml'),
    ...demo,
  };
  // A cluster this run started gets its topics replicated to match (3 copies, min.insync.replicas 2).
  if (stack.kafka.length > 1 && !process.env.SWITCHYARD_REPLICATION_FACTOR) env.SWITCHYARD_REPLICATION_FACTOR = String(replicationFor(stack.kafka.length).replicationFactor);
  await startReceiver({
    port: Number(demo.DEMO_RECEIVER_PORT),
    sharedSecret: demo.DEMO_SHARED_SECRET,
    onCall: ({ body, signatureValid }) => log(`demo receiver got ${JSON.stringify(body)} (signature ${signatureValid ? 'valid' : 'INVALID'})`),
  });
  log('creating topics and registering schemas');
  await runOnce('setup', { env: { ...env, ...as('setup') }, logFile: join(logs, 'setup.log') });
  for (const s of services) {
    const proc = spawnService(s.service, { env: { ...env, ...s.env, ...as(s.service as AclRole) }, logFile: join(logs, `${s.name}.log`) });
    started.push(proc);
    void proc.exited.then((code) => { if (!shutdown.stopping) void shutdown.exit(1, `${s.name} exited (${code}); see ${join(logs, `${s.name}.log`)}; stopping`); });
  }
  await Promise.all(services.map((s, i) => waitForHttp(`http://127.0.0.1:${s.port}/readyz`, 90_000, started[i])));
  for (const s of services) log(`${s.name.padEnd(11)} http://127.0.0.1:${s.port}  (/healthz /readyz /metrics)  log: ${join(logs, `${s.name}.log`)}`);
  log(`KAFKA_BROKERS=${stack.brokers} SCHEMA_REGISTRY_URL=${stack.registryUrl}`);
  if (security) for (const line of connectionSummary(security, stack.brokers)) log(line);
  log(`debugger    http://127.0.0.1:${services[0]!.port}/debugger  (sign in with the admin token below)`);
  log(`admin token: ${adminToken}${process.env.SWITCHYARD_ADMIN_TOKEN ? ' (from SWITCHYARD_ADMIN_TOKEN)' : ' (generated; set SWITCHYARD_ADMIN_TOKEN to choose one)'}`);
  log(`demo source write key: ${demo.DEMO_WRITE_KEY}; demo receiver http://127.0.0.1:${demo.DEMO_RECEIVER_PORT}/webhook (shared secret ${demo.DEMO_SHARED_SECRET})`);
  log(`ready in ${((Date.now() - t0) / 1000).toFixed(1)} s; Ctrl-C stops everything`);
} catch (err) {
  if (!shutdown.stopping) console.error(`[switchyard] start failed: ${(err as Error).message}`);
  await shutdown.exit(1);
}
