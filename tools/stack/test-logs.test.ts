import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { registerEnvSecrets, registerSecret, scanLogs, serviceLogFile } from './test-logs.js';

describe('test-run log scan', () => {
  const dir = mkdtempSync(join(tmpdir(), 'test-logs-'));
  const secretsFile = join(dir, 'secrets.jsonl');
  const env = { TEST_SECRETS_FILE: secretsFile, TEST_LOG_DIR: dir };
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('registers a secret with its Basic-auth base64 forms, and skips short values and masks', () => {
    registerSecret('wk_0123456789abcdef', 'write key', env);
    registerSecret('short', 'too short', env);
    registerSecret('************', 'mask', env);
    registerSecret(undefined, 'absent', env);
    const lines = readFileSync(secretsFile, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { label: string; value: string });
    assert.deepEqual(lines.map((l) => l.value), ['wk_0123456789abcdef', Buffer.from('wk_0123456789abcdef:').toString('base64'), Buffer.from('wk_0123456789abcdef').toString('base64')]);
    assert.equal(lines[1]!.label, 'write key (base64)');
  });

  it('does nothing outside a scanned run', () => {
    registerSecret('wk_0123456789abcdef', 'write key', {});
  });

  it('names each file and line holding a secret, in any form, and never the secret', () => {
    const saved = process.env.TEST_SECRETS_FILE;
    process.env.TEST_SECRETS_FILE = secretsFile;
    try { registerEnvSecrets({ SWITCHYARD_ADMIN_TOKEN: 'admin-token-0123456789', LOG_LEVEL: 'debug-level-long-value' }, 'control'); } finally {
      if (saved === undefined) delete process.env.TEST_SECRETS_FILE; else process.env.TEST_SECRETS_FILE = saved;
    }
    writeFileSync(join(dir, 'clean.log'), '{"msg":"listening"}\n{"msg":"debug-level-long-value"}\n');
    writeFileSync(join(dir, 'leaky.log'), `{"msg":"a"}\n{"auth":"Basic ${Buffer.from('wk_0123456789abcdef:').toString('base64')}"}\n{"t":"admin-token-0123456789"}\n`);
    writeFileSync(join(dir, 'not-a-log.txt'), 'wk_0123456789abcdef');
    const result = scanLogs(dir, secretsFile);
    assert.equal(result.files, 2);
    assert.deepEqual(result.leaks.map((l) => [l.file.endsWith('leaky.log'), l.line, l.label]), [
      [true, 2, 'write key (base64)'],
      [true, 3, 'SWITCHYARD_ADMIN_TOKEN of control'],
    ]);
  });

  it('puts each service process in its own file under TEST_LOG_DIR, or nowhere without one', () => {
    assert.match(serviceLogFile('ingest', 123, env)!, /\/ingest-123-\d+\.log$/);
    assert.equal(serviceLogFile('ingest', 123, {}), undefined);
  });
});
