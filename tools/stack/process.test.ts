import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { spawnManaged } from './process.js';

describe('spawnManaged', () => {
  it('stop() outlasts the grace period of a process that ignores SIGTERM: SIGKILL, then resolves with nothing else keeping the event loop alive', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'switchyard-process-'));
    try {
      // A stand-in for a broker stuck in its shutdown: it ignores SIGTERM and keeps running.
      const proc = await spawnManaged({
        name: 'stubborn', command: process.execPath, args: ['-e', "process.on('SIGTERM', () => {}); console.log('up'); setInterval(() => {}, 1000)"],
        logFile: join(dir, 'out.log'), pidFile: join(dir, 'pid'),
      });
      await new Promise((r) => setTimeout(r, 300)); // its SIGTERM handler is installed
      const started = Date.now();
      await proc.stop(200);
      assert.ok(Date.now() - started >= 200, 'waited for the grace period');
      assert.equal(await proc.exited, null); // killed by a signal, no exit code
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
