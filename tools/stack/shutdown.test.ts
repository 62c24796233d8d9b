import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { isAlive, sleep } from './process.js';
import { repoRoot } from './paths.js';

const fixture = join(repoRoot, 'tools/stack/shutdown-fixture.ts');
const nodeArgs = ['--conditions=source', '--import', 'tsx', fixture];

interface Started { child: ChildProcess; pids: number[]; output: string[]; exited: Promise<number | null> }

/** Starts `command` (the fixture, or something that starts it) and waits for the fixture's `ready` line. */
async function start(command: string, args: string[], env: NodeJS.ProcessEnv = {}): Promise<Started> {
  const child = spawn(command, args, { cwd: repoRoot, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
  const output: string[] = [];
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const pids = await new Promise<number[]>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no ready line:\n${output.join('\n')}`)), 20_000);
    child.stdout!.on('data', (d: Buffer) => {
      for (const line of d.toString('utf8').split('\n').filter(Boolean)) {
        output.push(line);
        const m = /^ready (.+)$/.exec(line);
        if (m) { clearTimeout(timer); resolve(m[1]!.split(' ').map(Number)); }
      }
    });
    void exited.then((code) => { clearTimeout(timer); reject(new Error(`exited ${code} before ready:\n${output.join('\n')}`)); });
  });
  return { child, pids, output, exited };
}

/** Waits until none of pids runs; returns those still running after timeoutMs. */
async function gone(pids: number[], timeoutMs: number): Promise<number[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const left = pids.filter(isAlive);
    if (left.length === 0 || Date.now() > deadline) return left;
    await sleep(50);
  }
}

function killAll(pids: number[]): void {
  for (const pid of pids) { try { process.kill(pid, 'SIGKILL'); } catch { /* gone */ } }
}

describe('shutdown: every process a command started stops with it', { concurrency: true }, () => {
  for (const sig of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) {
    it(`${sig}: the stop step runs, a child that ignores SIGTERM is SIGKILLed after the grace period, nothing is left, exit 128 + n`, async () => {
      const run = await start(process.execPath, nodeArgs);
      try {
        assert.equal(run.pids.length, 5, `the fixture, two children, a shell and its sleep: ${run.pids.join(' ')}`);
        const t0 = Date.now();
        run.child.kill(sig);
        assert.equal(await run.exited, 128 + { SIGHUP: 1, SIGINT: 2, SIGTERM: 15 }[sig]);
        assert.deepEqual(await gone(run.pids, 1000), []);
        assert.ok(Date.now() - t0 < 10_000, `took ${Date.now() - t0} ms`);
        assert.ok(run.output.includes('step ran with ' + String(128 + { SIGHUP: 1, SIGINT: 2, SIGTERM: 15 }[sig])), run.output.join('\n'));
        assert.ok(run.output.some((l) => /killed 1 process/.test(l)), run.output.join('\n'));
        assert.equal(run.output.at(-1), `at exit ${128 + { SIGHUP: 1, SIGINT: 2, SIGTERM: 15 }[sig]}, 0 processes left`, 'atExit runs last, once everything is gone');
      } finally {
        killAll(run.pids);
      }
    });
  }

  it('a second signal while stopping does not start another stop', async () => {
    const run = await start(process.execPath, nodeArgs);
    try {
      run.child.kill('SIGINT');
      await sleep(100);
      run.child.kill('SIGTERM');
      assert.equal(await run.exited, 130);
      assert.equal(run.output.filter((l) => l.startsWith('step ran')).length, 1);
      assert.deepEqual(await gone(run.pids, 1000), []);
    } finally {
      killAll(run.pids);
    }
  });

  it('an uncaught exception: the same stop, exit 1', async () => {
    const run = await start(process.execPath, nodeArgs, { SHUTDOWN_FIXTURE: 'throw' });
    try {
      assert.equal(await run.exited, 1);
      assert.ok(run.output.some((l) => l.includes('the fixture failed')), run.output.join('\n'));
      assert.ok(run.output.includes('step ran with 1'));
      assert.deepEqual(await gone(run.pids, 1000), []);
    } finally {
      killAll(run.pids);
    }
  });

  it('the parent killed (npm SIGKILLed, or given SIGHUP, which it does not pass on): the program notices it was re-parented and stops everything', async () => {
    // A shell between, as npm's `sh -c` is; killing it re-parents the fixture.
    const run = await start('sh', ['-c', `"${process.execPath}" ${nodeArgs.join(' ')}; true`]);
    const [program, ...started] = run.pids;
    try {
      run.child.kill('SIGKILL');
      assert.deepEqual(await gone([program!, ...started], 5000), []);
    } finally {
      killAll(run.pids);
    }
  });

  it('the program itself SIGKILLed (no cleanup can run): its long-lived children get SIGTERM from the kernel (parent-death signal) and stop', async () => {
    const run = await start(process.execPath, nodeArgs);
    const [program, stopsOnTerm] = run.pids;
    try {
      process.kill(program!, 'SIGKILL');
      assert.deepEqual(await gone([stopsOnTerm!], 3000), []);
    } finally {
      killAll(run.pids);
    }
  });
});
