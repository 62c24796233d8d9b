import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { repoRoot } from './stack/paths.js';
import { allTestFiles, unitEnv, unitTestFiles } from './test-lanes.js';

// Helpers under test/support that a unit test may import: they start no broker, registry or service.
const PURE_SUPPORT = new Set(['receiver']);

// What a test that needs the real stack reads or imports.
const STACK_MARKERS: Array<[RegExp, string]> = [
  [/process\.env\.(KAFKA_BROKERS|SCHEMA_REGISTRY_URL|SWITCHYARD_TEST_DIR)\b/, 'reads the stack address a stack-backed run sets'],
  [/\bstartStack\b|from '[^']*stack\/stack(\.js)?'/, 'starts the stack'],
];

describe('test lanes', () => {
  it('the unit lane is every colocated test, and npm test runs it and the suites under test/', () => {
    const unit = unitTestFiles();
    const all = allTestFiles();
    assert.ok(unit.length > 50, `only ${unit.length} unit test files found`);
    assert.ok(unit.every((f) => /^(packages|services|tools)\//.test(f)));
    assert.ok(unit.includes('tools/test-lanes.test.ts'));
    assert.deepEqual(all.filter((f) => !f.startsWith('test/')), unit);
    assert.ok(all.some((f) => f.startsWith('test/')));
  });

  it('no colocated test reaches for Kafka or the registry (those belong under test/)', () => {
    const offenders: string[] = [];
    // This file names the markers, so it is not scanned for them.
    for (const file of unitTestFiles().filter((f) => f !== 'tools/test-lanes.test.ts')) {
      const text = readFileSync(join(repoRoot, file), 'utf8');
      for (const [pattern, why] of STACK_MARKERS) if (pattern.test(text)) offenders.push(`${file} ${why}`);
      for (const [, name] of text.matchAll(/from '(?:\.\.\/)+test\/support\/([\w-]+)(?:\.js)?'/g)) {
        if (!PURE_SUPPORT.has(name!)) offenders.push(`${file} imports test/support/${name}`);
      }
    }
    assert.deepEqual(offenders, []);
  });

  it('a unit test sees Kafka and the registry at a closed port, and no stack-backed run', () => {
    const env = unitEnv({ PATH: '/bin', KAFKA_BROKERS: '127.0.0.1:9092', SCHEMA_REGISTRY_URL: 'http://127.0.0.1:8081', SWITCHYARD_TEST_DIR: '/tmp/x', TEST_LOG_DIR: '/tmp/x/logs', TEST_SECRETS_FILE: '/tmp/x/s' });
    assert.deepEqual(env, { PATH: '/bin', KAFKA_BROKERS: '127.0.0.1:1', SCHEMA_REGISTRY_URL: 'http://127.0.0.1:1' });
  });

  it('the closed port refuses at once, so a unit test reaching for Kafka fails fast', async () => {
    const [host, port] = unitEnv({}).KAFKA_BROKERS!.split(':');
    const t = Date.now();
    const err = await new Promise<NodeJS.ErrnoException | undefined>((resolve) => {
      const socket = connect(Number(port), host!, () => { socket.destroy(); resolve(undefined); });
      socket.once('error', resolve);
    });
    assert.equal(err?.code, 'ECONNREFUSED');
    assert.ok(Date.now() - t < 1000);
  });
});
