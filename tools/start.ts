// npm start: the whole pipeline on this machine. Starts (or reuses, via KAFKA_BROKERS /
// SCHEMA_REGISTRY_URL) Kafka and the schema registry, creates the topics, registers the schemas,
// starts every service, prints `ready` once all of them are, and stops everything on Ctrl-C.
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { startReceiver } from './demo/receiver.js';
import { repoRoot } from './stack/paths.js';
import { startStack, type Stack } from './stack/stack.js';
import { runOnce, spawnService, waitForHttp, type ServiceProcess } from './stack/services.js';

const dir = join(repoRoot, '.switchyard');
const logs = join(dir, 'logs');
const log = (line: string) => console.log(`[switchyard] ${line}`);

/** The long-running services, their port variable and default port. */
const services = [
  { name: 'control', portVar: 'CONTROL_PORT', port: 8081 },
  { name: 'ingest', portVar: 'INGEST_PORT', port: 8080 },
  { name: 'fanout', portVar: 'FANOUT_PORT', port: 8082 },
  { name: 'delivery', portVar: 'DELIVERY_PORT', port: 8083 },
  { name: 'audiences', portVar: 'AUDIENCES_PORT', port: 8084 },
] as const;

const started: ServiceProcess[] = [];
let stack: Stack | undefined;
let stopping = false;

async function stopAll(code: number): Promise<never> {
  if (!stopping) {
    stopping = true;
    log('stopping');
    await Promise.all(started.map((s) => s.stop('SIGTERM')));
    await stack?.stop();
    log('stopped');
  }
  process.exit(code);
}
for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.once(sig, () => void stopAll(0));

try {
  const t0 = Date.now();
  stack = await startStack({ dir, kafkaPort: 9092, controllerPort: 9093, registryPort: 8085, log });
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
  await startReceiver({
    port: Number(demo.DEMO_RECEIVER_PORT),
    sharedSecret: demo.DEMO_SHARED_SECRET,
    onCall: ({ body, signatureValid }) => log(`demo receiver got ${JSON.stringify(body)} (signature ${signatureValid ? 'valid' : 'INVALID'})`),
  });
  log('creating topics and registering schemas');
  await runOnce('setup', { env, logFile: join(logs, 'setup.log') });
  for (const s of services) {
    const port = Number(process.env[s.portVar] ?? s.port);
    const proc = spawnService(s.name, { env: { ...env, [s.portVar]: String(port) }, logFile: join(logs, `${s.name}.log`) });
    started.push(proc);
    void proc.exited.then((code) => { if (!stopping) { log(`${s.name} exited (${code}); see ${join(logs, `${s.name}.log`)}`); void stopAll(1); } });
  }
  await Promise.all(services.map((s, i) => waitForHttp(`http://127.0.0.1:${process.env[s.portVar] ?? s.port}/readyz`, 60_000, started[i])));
  for (const s of services) log(`${s.name.padEnd(9)} http://127.0.0.1:${process.env[s.portVar] ?? s.port}  (/healthz /readyz /metrics)  log: ${join(logs, `${s.name}.log`)}`);
  log(`KAFKA_BROKERS=${stack.brokers} SCHEMA_REGISTRY_URL=${stack.registryUrl}`);
  log(`debugger  http://127.0.0.1:${process.env.CONTROL_PORT ?? 8081}/debugger  (sign in with the admin token below)`);
  log(`admin token: ${adminToken}${process.env.SWITCHYARD_ADMIN_TOKEN ? ' (from SWITCHYARD_ADMIN_TOKEN)' : ' (generated; set SWITCHYARD_ADMIN_TOKEN to choose one)'}`);
  log(`demo source write key: ${demo.DEMO_WRITE_KEY}; demo receiver http://127.0.0.1:${demo.DEMO_RECEIVER_PORT}/webhook (shared secret ${demo.DEMO_SHARED_SECRET})`);
  log(`ready in ${((Date.now() - t0) / 1000).toFixed(1)} s; Ctrl-C stops everything`);
} catch (err) {
  console.error(`[switchyard] start failed: ${(err as Error).message}`);
  await stopAll(1);
}
