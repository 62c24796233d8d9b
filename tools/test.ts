// npm test: every test. Starts a fresh Kafka broker and schema registry in a temporary directory
// (or uses KAFKA_BROKERS / SCHEMA_REGISTRY_URL), then runs node's test runner over every
// *.test.ts file, and stops the stack. Extra arguments are passed to `node --test` (e.g. a file).
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { repoRoot } from './stack/paths.js';
import { freePort } from './stack/ports.js';
import { startStack, type Stack } from './stack/stack.js';

const t0 = Date.now();
const log = (line: string) => console.log(`[test] ${line}`);

function testFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    if (e.name === 'node_modules' || e.name === 'dist' || e.name.startsWith('.')) return [];
    const path = join(dir, e.name);
    return e.isDirectory() ? testFiles(path) : e.name.endsWith('.test.ts') ? [path] : [];
  });
}

const args = process.argv.slice(2);
const files = args.some((a) => a.endsWith('.ts'))
  ? []
  : ['packages', 'services', 'test', 'tools'].flatMap((d) => testFiles(join(repoRoot, d))).map((f) => relative(repoRoot, f)).sort();

const dir = mkdtempSync(join(tmpdir(), 'switchyard-test-'));
let stack: Stack | undefined;
let code = 1;
try {
  stack = await startStack({ dir, kafkaPort: await freePort(), controllerPort: await freePort(), registryPort: await freePort(), log });
  const timings = [stack.timings.kafkaMs && `Kafka ${(stack.timings.kafkaMs / 1000).toFixed(1)} s`, stack.timings.registryMs && `registry ${(stack.timings.registryMs / 1000).toFixed(1)} s`].filter(Boolean);
  if (timings.length) log(`start-up: ${timings.join(', ')}`);
  code = await new Promise<number>((resolve) => {
    const child = spawn(process.execPath, ['--conditions=source', '--import', 'tsx', '--test', '--test-reporter=spec', '--test-timeout=180000', ...args, ...files], {
      cwd: repoRoot,
      stdio: 'inherit',
      env: { ...process.env, KAFKA_BROKERS: stack!.brokers, SCHEMA_REGISTRY_URL: stack!.registryUrl, SWITCHYARD_TEST_DIR: dir },
    });
    child.on('exit', (c, sig) => resolve(c ?? (sig ? 1 : 0)));
    for (const sig of ['SIGINT', 'SIGTERM'] as const) process.once(sig, () => child.kill(sig));
  });
} catch (err) {
  console.error(`[test] ${(err as Error).stack ?? err}`);
} finally {
  await stack?.stop();
  if (code === 0) rmSync(dir, { recursive: true, force: true });
  else log(`kept ${dir} (broker and registry logs) for inspection`);
  log(`total ${((Date.now() - t0) / 1000).toFixed(1)} s`);
}
process.exit(code);
