// The benchmark command in its tiny mode (a few hundred events per scenario, no 1M backlog), against
// the real broker and registry of the test run, so `npm run bench` cannot rot: it must run every
// scenario, print the table, write the JSON, and find every sent event at its receiver. Targets are
// not asserted here (they depend on the machine and on what else runs); BENCHMARKS.md records them.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { repoRoot } from '../tools/stack/paths.js';
import { testStack } from './support/stack.js';

describe('npm run bench -- --tiny', () => {
  it('runs every scenario against the real stack, prints the table and writes JSON with every event accounted for', async () => {
    const { brokers, registryUrl } = testStack();
    const dir = mkdtempSync(join(tmpdir(), 'switchyard-bench-test-'));
    const out = join(dir, 'result.json');
    try {
      const { code, stdout, stderr } = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
        const child = spawn(process.execPath, ['--conditions=source', '--import', 'tsx', join(repoRoot, 'tools', 'bench', 'main.ts'), '--tiny', '--out', out], {
          cwd: repoRoot, env: { ...process.env, KAFKA_BROKERS: brokers, SCHEMA_REGISTRY_URL: registryUrl }, stdio: ['ignore', 'pipe', 'pipe'],
        });
        let so = '';
        let se = '';
        child.stdout.on('data', (c: Buffer) => { so += c.toString(); });
        child.stderr.on('data', (c: Buffer) => { se += c.toString(); });
        child.on('exit', (c) => resolve({ code: c, stdout: so, stderr: se }));
      });
      assert.equal(code, 0, `bench exited ${code}\n${stdout}\n${stderr.slice(-4000)}`);
      assert.match(stdout, /\| scenario +\| result/);
      const result = JSON.parse(readFileSync(out, 'utf8')) as { mode: string; rows: Array<{ scenario: string; value: number; verified: boolean; ratio?: number }> };
      assert.equal(result.mode, 'tiny');
      const names = result.rows.map((r) => r.scenario);
      for (const expected of ['baseline (a)', 'baseline (b)', 'baseline (c)', 'ingest only', 'end to end at saturation', 'end to end, attempts topic on vs off', 'end to end latency', 'retry storm', 'slow receiver', 'isolation', 'isolation: healthy beside rate-limited', 'fan-out CPU per event vs bare consume→transactional produce', 'delivery CPU per task', 'bare undici client CPU per request', 'delivery CPU per task vs bare consume + bare client', 'end to end vs the sum of its parts', 'horizontal: 1 delivery instance', 'horizontal: 2 delivery instances', 'horizontal: 3 delivery instances', 'failover: SIGKILL of the broker leading most partitions', 'failover: the killed broker started again', 'failover: SIGKILL of the active KRaft controller', 'failover: rolling restart of every service']) {
        assert.ok(names.some((n) => n.startsWith(expected)), `row ${expected} in ${names.join(', ')}`);
      }
      for (const row of result.rows) {
        assert.ok(row.verified, `${row.scenario}: every sent event arrived`);
        assert.ok(Number.isFinite(row.value) && row.value >= 0, `${row.scenario}: value ${row.value}`);
        if (row.ratio !== undefined) assert.ok(Number.isFinite(row.ratio) && row.ratio > 0, `${row.scenario}: ratio ${row.ratio}`);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
