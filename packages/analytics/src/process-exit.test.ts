// The client in a process of its own: an idle client must not keep the process alive, and a
// message still waiting for its flushAfter window is sent before the process ends by itself.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { afterEach, beforeEach, it } from 'node:test';
import { startRecordingServer, type RecordingServer } from './test-support/recording-server.js';

let server: RecordingServer;
beforeEach(async () => {
  server = await startRecordingServer();
});
afterEach(() => server.close());

/** Runs an ES module body with `Analytics` in scope; resolves with the exit code and the run time. */
function runScript(body: string): Promise<{ code: number | null; ms: number; stderr: string }> {
  const source = `import { Analytics } from ${JSON.stringify(new URL('./index.ts', import.meta.url).href)};\n${body}`;
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--conditions=source', '--import', 'tsx', '--input-type=module', '-e', source], { env: { ...process.env, DEBUG: '' }, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const kill = setTimeout(() => child.kill('SIGKILL'), 30_000);
    child.on('error', reject);
    child.on('exit', (code) => {
      clearTimeout(kill);
      resolve({ code, ms: Date.now() - started, stderr });
    });
  });
}

it('a client whose queue is empty does not hold up the exit of the process', async () => {
  // flushAfter is a minute: had the timer held the process, it would be killed after 30 s.
  const run = await runScript(`
    const idle = new Analytics('wk', { endpoint: ${JSON.stringify(server.url)}, flushAfter: 60_000 });
    const used = new Analytics('wk', { endpoint: ${JSON.stringify(server.url)}, flushAfter: 60_000 });
    used.track({ userId: 'u', event: 'E' });
    await used.flush();
  `);
  assert.equal(run.code, 0, run.stderr);
  assert.ok(run.ms < 20_000, `took ${run.ms} ms`);
  assert.equal(server.messageCount, 1);
  console.log(`# child exited in ${run.ms} ms (tsx start-up included)`);
});

it('a message still waiting for flushAfter is sent before the process ends by itself', async () => {
  const run = await runScript(`
    const c = new Analytics('wk', { endpoint: ${JSON.stringify(server.url)}, flushAfter: 300 });
    c.track({ userId: 'u', event: 'E' });
  `);
  assert.equal(run.code, 0, run.stderr);
  assert.equal(server.messageCount, 1);
});
