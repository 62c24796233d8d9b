// npm run test:unit: the colocated unit tests only, with no Kafka, schema registry or Java. Runs node's
// test runner over every *.test.ts under packages/, services/ and tools/ (tools/test-lanes.ts) with
// KAFKA_BROKERS and SCHEMA_REGISTRY_URL pointing at a closed port, so a unit test that tries to reach
// either fails at once. Extra arguments are passed to `node --test` (e.g. a file, --test-only).
// The stack-backed suites under test/ run with everything else in `npm test` (tools/test.ts).
import { spawn } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { repoRoot } from './stack/paths.js';
import { installShutdown } from './stack/shutdown.js';
import { unitEnv, unitTestFiles } from './test-lanes.js';

const t0 = Date.now();
const args = process.argv.slice(2);
const files = args.some((a) => a.endsWith('.ts')) ? [] : unitTestFiles();

// The slowest unit test takes a few seconds; a test waiting far longer is waiting for something a
// unit test must not need (a broker, a registry), and fails rather than hangs the lane.
// Each file still runs in a process of its own, as in npm test; one per core at a time (node's default
// is one fewer, which on a two-core machine means one file after another, twice as slow).
const child = spawn(process.execPath, ['--conditions=source', '--import', 'tsx', '--test', '--test-reporter=spec', '--test-timeout=30000', `--test-concurrency=${availableParallelism()}`, ...args, ...files], {
  cwd: repoRoot,
  stdio: 'inherit',
  env: unitEnv(process.env),
});
// Stopped (a signal, npm gone): the runner gets SIGTERM, then what is left of this tree SIGKILL.
const shutdown = installShutdown({ log: (line) => console.log(`[test:unit] ${line}`), graceMs: 5_000 });
shutdown.onStop('the test runner', () => { if (child.exitCode === null && child.signalCode === null) { child.kill('SIGTERM'); return new Promise((resolve) => child.once('exit', resolve)); } });
child.on('exit', (code, sig) => {
  console.log(`[test:unit] ${files.length ? `${files.length} files` : 'the given files'}, total ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  void shutdown.exit(code ?? (sig ? 1 : 0));
});
