import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { isAlive, killListed, spawnManaged, SPAWNED_PIDS_FILE } from './process.js';

describe('spawnManaged', () => {
  it('stop() outlasts the grace period of a process that ignores SIGTERM: SIGKILL, then resolves with nothing else keeping the event loop alive', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'switchyard-process-'));
    try {
      // A stand-in for a broker stuck in its shutdown: it ignores SIGTERM and keeps running.
      const proc = await spawnManaged({
        name: 'stubborn', command: process.execPath, args: ['-e', "process.on('SIGTERM', () => {}); console.log('up'); setInterval(() => {}, 1000)"],
        logFile: join(dir, 'out.log'), pidFile: join(dir, 'pid'),
      });
      // Its SIGTERM handler is installed before it prints: wait for the line, however slow the start.
      while (!readFileSync(join(dir, 'out.log'), 'utf8').includes('up')) await new Promise((r) => setTimeout(r, 20));
      const started = Date.now();
      await proc.stop(200);
      assert.ok(Date.now() - started >= 200, 'waited for the grace period');
      assert.equal(await proc.exited, null); // killed by a signal, no exit code
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a process spawned while SWITCHYARD_SPAWNED_PIDS names a file is listed there, and killListed ends it (what a test file cut off at its timeout left running)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'switchyard-process-'));
    const listed = join(dir, 'spawned');
    const before = process.env[SPAWNED_PIDS_FILE];
    process.env[SPAWNED_PIDS_FILE] = listed;
    try {
      const proc = await spawnManaged({ name: 'left', command: process.execPath, args: ['-e', 'setInterval(() => {}, 1000)'], logFile: join(dir, 'out.log'), pidFile: join(dir, 'pid') });
      assert.ok(isAlive(proc.pid));
      assert.equal(killListed(listed), 1);
      const alive = setInterval(() => {}, 1000); // the child is unreferenced: keep the loop until its exit
      assert.equal(await proc.exited, null);
      clearInterval(alive);
      assert.equal(killListed(listed), 0, 'nothing left to kill');
    } finally {
      if (before === undefined) delete process.env[SPAWNED_PIDS_FILE];
      else process.env[SPAWNED_PIDS_FILE] = before;
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
