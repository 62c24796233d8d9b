// The two test lanes and the files in each. Unit tests live beside their sources (packages/,
// services/, tools/) and need no Kafka, schema registry or Java; suites that need the real stack
// live under test/. `npm run test:unit` runs the first lane alone; `npm test` runs both.
import { readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { repoRoot } from './stack/paths.js';

/** Where the colocated unit tests live. */
export const UNIT_DIRS = ['packages', 'services', 'tools'] as const;
/** Where the suites that need a broker and a registry live. */
export const INTEGRATION_DIRS = ['test'] as const;

/**
 * The environment a unit test runs in: the stack's addresses point at a closed port, so a test that
 * reaches for Kafka or the registry fails at once with ECONNREFUSED instead of finding a broker left
 * running by someone else; the variables of a stack-backed run (tools/test.ts) are removed.
 */
export const UNIT_ENV_OVERRIDES: Readonly<Record<string, string | undefined>> = {
  KAFKA_BROKERS: '127.0.0.1:1',
  SCHEMA_REGISTRY_URL: 'http://127.0.0.1:1',
  SWITCHYARD_TEST_DIR: undefined,
  SWITCHYARD_TEST_BROKERS: undefined,
  SWITCHYARD_REPLICATION_FACTOR: undefined,
  SWITCHYARD_SPAWNED_PIDS: undefined,
  TEST_LOG_DIR: undefined,
  TEST_SECRETS_FILE: undefined,
};

function testFilesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    if (e.name === 'node_modules' || e.name === 'dist' || e.name.startsWith('.')) return [];
    const path = join(dir, e.name);
    return e.isDirectory() ? testFilesUnder(path) : e.name.endsWith('.test.ts') ? [path] : [];
  });
}

/** Every *.test.ts file under the given top-level folders, relative to the repository root, sorted. */
export function testFiles(dirs: readonly string[]): string[] {
  return dirs.flatMap((d) => testFilesUnder(join(repoRoot, d))).map((f) => relative(repoRoot, f)).sort();
}

/** The unit lane: every colocated test. */
export const unitTestFiles = (): string[] => testFiles(UNIT_DIRS);

/** Both lanes: what `npm test` runs. */
export const allTestFiles = (): string[] => testFiles([...UNIT_DIRS, ...INTEGRATION_DIRS]);

/** `env` with UNIT_ENV_OVERRIDES applied (undefined removes a variable). */
export function unitEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = { ...env };
  for (const [name, value] of Object.entries(UNIT_ENV_OVERRIDES)) {
    if (value === undefined) delete out[name];
    else out[name] = value;
  }
  return out;
}
