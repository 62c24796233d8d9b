// npm run bench [-- --quick | --tiny] [--only a,b] [--task-hops] [--profile] [--source] [--out FILE]: measures Switchyard against baselines taken in
// the same run on the same machine and prints a table of ratios (and writes it as JSON under
// bench-results/). Uses KAFKA_BROKERS / SCHEMA_REGISTRY_URL when both are set, else starts a fresh
// broker and registry in a temporary directory (as `npm test` does). Everything listens on
// 127.0.0.1; every load is bounded; every scenario checks that each sent event arrived, by messageId.
// Each scenario is a module under scenarios/; run.ts runs them in order. The services run as the
// container runs them, built (`npm run build` first, plain node on dist/main.js); --source runs
// them from TypeScript through tsx instead, as `npm start` and the tests do.
// SIGINT, SIGTERM or SIGHUP (to npm or to this program), a failure, or npm going away stop every
// process the run started, and the broker and registry (tools/stack/shutdown.ts).
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { repoRoot } from '../stack/paths.js';
import { freeKafkaAddresses, freePort } from '../stack/ports.js';
import { installShutdown } from '../stack/shutdown.js';
import { startStack, type Stack } from '../stack/stack.js';
import { log } from './context.js';
import { parseOptions } from './options.js';
import { reusedStackSecurity, type StackRef } from './pipeline.js';
import { summariseDir } from './profile.js';
import { formatTable, round, type Row } from './report.js';
import { runScenarios } from './run.js';
import { SIZES } from './sizes.js';

const shutdown = installShutdown({ log });

async function main(): Promise<void> {
  const { mode, only, out, profile, taskHops, source } = parseOptions(process.argv.slice(2));
  const code = source ? 'source' : 'built';
  if (code === 'built') { log('building the services (npm run build)'); await buildServices(); }
  /** Extra environment of every service process. */
  const serviceEnv: NodeJS.ProcessEnv = {};
  // --profile: every service process writes a V8 CPU profile on exit (tools/bench/cpu-profile-hook.mjs); summarised after the table.
  const profileDir = profile ? join(repoRoot, 'bench-results', `profiles-${new Date().toISOString().replace(/[:.]/g, '-')}`) : undefined;
  if (profileDir) { mkdirSync(profileDir, { recursive: true }); serviceEnv.NODE_OPTIONS = `${process.env.NODE_OPTIONS ?? ''} --import ${join(repoRoot, 'tools', 'bench', 'cpu-profile-hook.mjs')}`.trim(); serviceEnv.BENCH_PROFILE_DIR = profileDir; }
  const sizes = SIZES[mode];
  const t0 = Date.now();
  const runId = randomUUID().slice(0, 8);
  log(`mode ${mode}, run ${runId}, services ${code}`);

  let stack: Stack | undefined;
  const brokerPids: number[] = [];
  let registryPid: number | undefined;
  if (!(process.env.KAFKA_BROKERS && process.env.SCHEMA_REGISTRY_URL)) {
    const dir = mkdtempSync(join(tmpdir(), 'switchyard-bench-'));
    // After every process is gone, even if the stop ran out of time.
    shutdown.atExit(() => rmSync(dir, { recursive: true, force: true }));
    log('KAFKA_BROKERS / SCHEMA_REGISTRY_URL not set: starting a broker and registry');
    stack = await startStack({ dir, kafka: await freeKafkaAddresses(1), registryPort: await freePort(), log });
    brokerPids.push(...stack.kafka.map((k) => k.pid));
    registryPid = stack.registry?.pid;
  }
  // A reused stack may be secured: the bench's own clients connect as the services do (they inherit the environment).
  const ref: StackRef = stack ? { brokers: stack.brokers, registryUrl: stack.registryUrl } : { brokers: process.env.KAFKA_BROKERS!, registryUrl: process.env.SCHEMA_REGISTRY_URL!, ...reusedStackSecurity() };
  const cleanups: Array<() => Promise<unknown>> = [];
  // Once, whether the run ends or a signal stops it first (then the scenario still running fails; its error is not reported).
  let teardown: Promise<void> | undefined;
  const tearDown = () => teardown ??= (async () => {
    for (const c of cleanups.reverse()) await c().catch((e) => log(`cleanup: ${(e as Error).message}`));
    await stack?.stop();
  })();
  shutdown.onStop('the run', tearDown);
  let rows: Row[] = [];
  let failed: unknown;
  try {
    rows = await runScenarios({ ref, s: sizes, runId, base: `bench.${runId}.`, serviceEnv, code, taskHops, brokerPids, registryPid, cleanups }, only);
  } catch (err) {
    failed = err;
  } finally {
    await tearDown();
  }
  if (shutdown.stopping) return;
  if (failed) { console.error(failed); process.exitCode = 1; if (!rows.length) return; }

  const seconds = (Date.now() - t0) / 1000;
  const result = {
    mode, runId, startedAt: new Date(t0).toISOString(), seconds: round(seconds, 1),
    machine: { cpus: cpus().length, cpuModel: cpus()[0]?.model, memoryGb: round(totalmem() / 2 ** 30, 1), node: process.version, platform: `${process.platform} ${process.arch}` },
    stack: { brokers: ref.brokers, registryUrl: ref.registryUrl, reused: !stack },
    rows,
  };
  console.log(formatTable(rows));
  console.log(`\n${mode} run in ${seconds.toFixed(1)} s on ${result.machine.cpus} × ${result.machine.cpuModel}, Node ${process.version}`);
  const file = out ?? join(repoRoot, 'bench-results', `${new Date(t0).toISOString().replace(/[:.]/g, '-')}-${mode}.json`);
  mkdirSync(join(file, '..'), { recursive: true });
  writeFileSync(file, `${JSON.stringify(result, null, 2)}\n`);
  console.log(`written to ${file}`);
  if (profileDir) console.log(`\nCPU profiles (${profileDir}):\n${summariseDir(profileDir)}`);
  const unverified = rows.filter((r) => !r.verified);
  if (unverified.length) { console.error(`NOT VERIFIED (events missing): ${unverified.map((r) => r.scenario).join(', ')}`); process.exitCode = 1; }
}

/** `npm run build` (tsc -b, incremental): the services' dist/ as the container image builds it. Not spawnSync: a signal must be handled meanwhile. */
async function buildServices(): Promise<void> {
  const child = spawn('npm', ['run', '--silent', 'build'], { cwd: repoRoot, stdio: ['ignore', 'inherit', 'inherit'] });
  const [status, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (c, sig) => resolve([c, sig]));
  });
  if (status !== 0) throw new Error(`npm run build failed (${status ?? signal}): the benchmark runs the built services (or pass --source)`);
}

try {
  await main();
} catch (err) {
  if (!shutdown.stopping) { console.error(err); process.exitCode = 1; }
}
// Nothing of the run may keep the process alive (kafkajs and undici sockets are closed above; this
// guards against a stray timer turning a finished run into a hang). Stopped by a signal meanwhile:
// that stop's exit code.
await shutdown.exit(typeof process.exitCode === 'number' ? process.exitCode : 0);
