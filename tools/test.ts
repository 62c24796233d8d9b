// npm test: every test, both lanes (tools/test-lanes.ts). Starts a fresh Kafka broker and schema
// registry in a temporary directory, then runs node's test runner over every *.test.ts file (the
// colocated unit tests and the suites under test/), and stops the stack. Extra arguments are passed
// to `node --test` (e.g. a file). `npm run test:unit` runs the unit lane alone, without the stack
// (tools/test-unit.ts).
// SWITCHYARD_TEST_BROKERS=3 starts a three-node cluster instead, and the tests' setup runs then
// replicate their topics to match (SWITCHYARD_REPLICATION_FACTOR, unless set).
// Every service a test starts logs to its own file under <run dir>/logs; at the end every such file
// is scanned for the secrets the tests registered, and a leak fails the run (tools/stack/test-logs.ts).
// SIGINT, SIGTERM or SIGHUP (to npm or to this program), or npm going away, stops the runner, its
// files and what they started, and the stack, and fails the run (tools/stack/shutdown.ts).
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { repoRoot } from './stack/paths.js';
import { exitWithParent, killListed, SPAWNED_PIDS_FILE } from './stack/process.js';
import { replicationFor } from './stack/kafka.js';
import { parseBrokers } from './stack/layout.js';
import { freeKafkaAddresses, freePort } from './stack/ports.js';
import { installShutdown } from './stack/shutdown.js';
import { startStack, type Stack } from './stack/stack.js';
import { scanLogs, TEST_LOG_DIR, TEST_SECRETS_FILE } from './stack/test-logs.js';
import { allTestFiles } from './test-lanes.js';

const t0 = Date.now();
const log = (line: string) => console.log(`[test] ${line}`);

const args = process.argv.slice(2);
const files = args.some((a) => a.endsWith('.ts')) ? [] : allTestFiles();

const dir = mkdtempSync(join(tmpdir(), 'switchyard-test-'));
const logDir = join(dir, 'logs');
const secretsFile = join(dir, 'secrets.jsonl');
const spawnedPids = join(dir, 'spawned-pids');
mkdirSync(logDir);
let stack: Stack | undefined;
let runner: ChildProcess | undefined;
// An interrupted run fails (128 + the signal's number); the stack stops last, after the runner.
const shutdown = installShutdown({ log });
shutdown.atExit((code) => {
  if (code === 0) rmSync(dir, { recursive: true, force: true });
  else log(`kept ${dir} (broker and registry logs) for inspection`);
  log(`total ${((Date.now() - t0) / 1000).toFixed(1)} s`);
});
shutdown.onStop('the stack', () => stack?.stop());
shutdown.onStop('the test runner', () => stopRunner());
let code = 1;
try {
  const brokerCount = parseBrokers(process.env.SWITCHYARD_TEST_BROKERS);
  stack = await startStack({ dir, kafka: await freeKafkaAddresses(brokerCount), registryPort: await freePort(), log });
  const cluster = brokerCount > 1 ? { SWITCHYARD_REPLICATION_FACTOR: process.env.SWITCHYARD_REPLICATION_FACTOR ?? String(replicationFor(brokerCount).replicationFactor) } : {};
  const timings = [stack.timings.kafkaMs && `Kafka ${(stack.timings.kafkaMs / 1000).toFixed(1)} s`, stack.timings.registryMs && `registry ${(stack.timings.registryMs / 1000).toFixed(1)} s`].filter(Boolean);
  if (timings.length) log(`start-up: ${timings.join(', ')}`);
  code = await new Promise<number>((resolve) => {
    // Each file's limit is a guard against a hang, not a measure: the fault files wait up to 240 s
    // for a pipeline to settle after two restarts, and must get to say what they waited for.
    const [command, argv] = exitWithParent(process.execPath, ['--conditions=source', '--import', 'tsx', '--test', '--test-reporter=spec', '--test-timeout=600000', ...args, ...files]);
    const child = spawn(command, argv, {
      cwd: repoRoot,
      stdio: 'inherit',
      env: { ...process.env, ...cluster, KAFKA_BROKERS: stack!.brokers, SCHEMA_REGISTRY_URL: stack!.registryUrl, SWITCHYARD_TEST_DIR: dir, [TEST_LOG_DIR]: logDir, [TEST_SECRETS_FILE]: secretsFile, [SPAWNED_PIDS_FILE]: spawnedPids },
      // Its own process group: a test file killed at its timeout leaves the services it spawned
      // behind (its `after` never ran); once the runner is done, whatever is left of the group goes.
      detached: true,
    });
    runner = child;
    child.on('exit', (c, sig) => {
      try { process.kill(-child.pid!, 'SIGKILL'); } catch { /* nothing left */ }
      const leftovers = killListed(spawnedPids);
      if (leftovers) log(`killed ${leftovers} process(es) (JVMs) a test file left running`);
      resolve(c ?? (sig ? 1 : 0));
    });
  });
  if (!secretScanPassed()) code = 1;
} catch (err) {
  if (!shutdown.stopping) console.error(`[test] ${(err as Error).stack ?? err}`);
}
await shutdown.exit(code);

/**
 * Stopped while the tests run: the runner gets SIGTERM (it ends its files), and after a few seconds
 * its whole group SIGKILL, with the JVMs the files listed (the exit handler above).
 */
async function stopRunner(): Promise<void> {
  const child = runner;
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  const timer = setTimeout(() => { try { process.kill(-child.pid!, 'SIGKILL'); } catch { /* gone */ } }, 5_000);
  await exited;
  clearTimeout(timer);
}

/** The log scan: names each file and line holding a registered secret (never the secret itself). */
function secretScanPassed(): boolean {
  const t = Date.now();
  const { files, bytes, secrets, leaks } = scanLogs(logDir, secretsFile);
  log(`secret scan: ${secrets} secrets in ${files} service log files (${(bytes / 1e6).toFixed(1)} MB), ${leaks.length} leaks, ${Date.now() - t} ms`);
  for (const leak of leaks.slice(0, 50)) console.error(`[test] LEAK ${leak.file}:${leak.line} contains ${leak.label}`);
  return leaks.length === 0;
}
