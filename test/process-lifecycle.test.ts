// `npm start` stops everything it started when told to, however it is told: SIGTERM to npm's pid
// (what systemd, `timeout` or a CI runner sends), SIGINT straight to the program, or npm killed
// outright. Each run gets ports and a data directory of its own (never the suite's broker, nor a
// checkout's .switchyard/); the process tree is read from /proc before the signal, and within
// 20 s none of it may run and every port must be free again.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { freePort } from '../tools/stack/ports.js';
import { descendants, isRunning, sleep, type ProcessRef } from '../tools/stack/process.js';
import { repoRoot } from '../tools/stack/paths.js';
import { testStack, uniquePrefix } from './support/stack.js';

const STOP_WITHIN_MS = 20_000;

/** Whether nothing listens on 127.0.0.1:port (a listen succeeds). */
function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/** A free port whose next port is free too (a Kafka node listens on both). */
async function freePortPair(): Promise<number> {
  for (;;) {
    const port = await freePort();
    if (port < 65535 && await portFree(port + 1)) return port;
  }
}

interface Run {
  npm: ChildProcess;
  output: string[];
  ports: number[];
  dir: string;
}

/** `npm start` with ports of its own (its own Kafka and registry unless `reuse`), until it prints `ready`. */
async function startNpm(label: string, reuse: boolean): Promise<Run> {
  const dir = mkdtempSync(join(tmpdir(), `switchyard-lifecycle-${label}-`));
  const services = { CONTROL_PORT: await freePort(), INGEST_PORT: await freePort(), FANOUT_PORT: await freePort(), DELIVERY_PORT: await freePort(), AUDIENCES_PORT: await freePort(), DEMO_RECEIVER_PORT: await freePort() };
  const kafkaPort = await freePortPair();
  const registryPort = await freePort();
  const env: NodeJS.ProcessEnv = { ...process.env, ...Object.fromEntries(Object.entries(services).map(([k, v]) => [k, String(v)])), SWITCHYARD_TOPIC_PREFIX: uniquePrefix(`life-${label}`), LOG_LEVEL: 'warn' };
  if (reuse) { env.KAFKA_BROKERS = testStack().brokers; env.SCHEMA_REGISTRY_URL = testStack().registryUrl; } else { delete env.KAFKA_BROKERS; delete env.SCHEMA_REGISTRY_URL; }
  // Its own process group, so that whatever a failed assertion leaves is killed in one go (finally).
  const npm = spawn('npm', ['start', '--silent', '--', '--dir', dir, '--kafka-port', String(kafkaPort), '--registry-port', String(registryPort)], { cwd: repoRoot, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  const output: string[] = [];
  const onData = (d: Buffer) => { for (const line of d.toString('utf8').split('\n')) if (line.trim()) output.push(line); };
  npm.stdout!.on('data', onData);
  npm.stderr!.on('data', onData);
  const run = { npm, output, dir, ports: [...Object.values(services), ...(reuse ? [] : [kafkaPort, kafkaPort + 1, registryPort])] };
  const deadline = Date.now() + 240_000;
  while (!output.some((l) => /\] ready in /.test(l))) {
    if (npm.exitCode !== null || npm.signalCode !== null) throw new Error(`npm start exited (${npm.exitCode ?? npm.signalCode}) before ready:\n${output.slice(-30).join('\n')}`);
    if (Date.now() > deadline) throw new Error(`npm start not ready in 240 s:\n${output.slice(-30).join('\n')}`);
    await sleep(250);
  }
  return run;
}

/** npm, and every process below it, as /proc shows them now. */
function tree(npm: ChildProcess): ProcessRef[] {
  const self = descendants(process.pid).find((p) => p.pid === npm.pid);
  assert.ok(self, 'npm runs');
  return [self, ...descendants(npm.pid!)];
}

/** Within STOP_WITHIN_MS, nothing of the tree runs and every port is free; says what was left otherwise. */
async function assertAllGone(run: Run, processes: ProcessRef[], t0: number): Promise<number> {
  for (;;) {
    const left = processes.filter(isRunning);
    const busy: number[] = [];
    for (const port of run.ports) if (!(await portFree(port))) busy.push(port);
    if (left.length === 0 && busy.length === 0) return Date.now() - t0;
    if (Date.now() - t0 > STOP_WITHIN_MS) {
      const names = left.map((p) => { try { return `${p.pid} ${readFileSync(`/proc/${p.pid}/cmdline`, 'utf8').replace(/\0/g, ' ').slice(0, 120)}`; } catch { return String(p.pid); } });
      assert.fail(`after ${STOP_WITHIN_MS / 1000} s still running:\n${names.join('\n')}\nports in use: ${busy.join(', ')}\n${run.output.slice(-20).join('\n')}`);
    }
    await sleep(200);
  }
}

/** Whatever a failed run left: the group, and each process of the tree (JVMs run in groups of their own). */
function cleanUp(run: Run | undefined, processes: ProcessRef[]): void {
  if (!run) return;
  try { process.kill(-run.npm.pid!, 'SIGKILL'); } catch { /* gone */ }
  for (const p of processes.filter(isRunning)) { try { process.kill(p.pid, 'SIGKILL'); } catch { /* gone */ } }
  rmSync(run.dir, { recursive: true, force: true });
}

describe('npm start stops every process it started', { timeout: 360_000 }, () => {
  it('SIGTERM to npm\'s pid (its own Kafka, registry, services and demo receiver): nothing left and every port free within 20 s', async () => {
    let run: Run | undefined;
    let processes: ProcessRef[] = [];
    try {
      run = await startNpm('term', false);
      processes = tree(run.npm);
      const java = processes.filter((p) => { try { return readFileSync(`/proc/${p.pid}/cmdline`, 'utf8').startsWith('java'); } catch { return false; } });
      assert.equal(java.length, 2, 'a broker JVM and a registry JVM');
      assert.ok(processes.length >= 8, `npm, the program, two JVMs and five services: ${processes.length}`);
      const t0 = Date.now();
      process.kill(run.npm.pid!, 'SIGTERM');
      const took = await assertAllGone(run, processes, t0);
      assert.ok(run.output.some((l) => /SIGTERM: stopping/.test(l)), run.output.slice(-10).join('\n'));
      console.log(`# stopped in ${(took / 1000).toFixed(1)} s`);
    } finally {
      cleanUp(run, processes);
    }
  });

  it('SIGINT straight to the program (not npm), on the suite\'s broker: every service stops, every port is free', async () => {
    let run: Run | undefined;
    let processes: ProcessRef[] = [];
    try {
      run = await startNpm('int', true);
      processes = tree(run.npm);
      // npm execs the program (package.json): its direct child.
      const program = processes.find((p) => { try { return readFileSync(`/proc/${p.pid}/cmdline`, 'utf8').includes('tools/start.ts'); } catch { return false; } });
      assert.ok(program, 'the program runs');
      const t0 = Date.now();
      process.kill(program.pid, 'SIGINT');
      await assertAllGone(run, processes, t0);
      assert.equal(await new Promise((resolve) => { if (run!.npm.exitCode !== null) resolve(run!.npm.exitCode); else run!.npm.once('exit', (code) => resolve(code)); }), 0, 'Ctrl-C is how npm start ends: exit 0');
    } finally {
      cleanUp(run, processes);
    }
  });

  it('npm SIGKILLed (no signal reaches the program): the program sees it was re-parented and stops everything', async () => {
    let run: Run | undefined;
    let processes: ProcessRef[] = [];
    try {
      run = await startNpm('kill', true);
      processes = tree(run.npm);
      const t0 = Date.now();
      process.kill(run.npm.pid!, 'SIGKILL');
      await assertAllGone(run, processes, t0);
    } finally {
      cleanUp(run, processes);
    }
  });
});
