// A stand-in for a command that starts processes, for shutdown.test.ts: installs the shutdown
// handlers, starts two children as the commands do (one that stops on SIGTERM, one that ignores
// it and must be SIGKILLed) and one grandchild through a shell, registers a stop step that prints
// a line, and prints `ready <pid> <pid> …`: itself, the child that stops on SIGTERM, then every other
// process it started.
// SHUTDOWN_FIXTURE=throw: fails by an uncaught exception once ready.
import { spawn } from 'node:child_process';
import { descendants, exitWithParent } from './process.js';
import { installShutdown } from './shutdown.js';

const shutdown = installShutdown({ log: (line) => console.log(`shutdown: ${line}`), graceMs: Number(process.env.SHUTDOWN_GRACE_MS ?? 2000), watchParentMs: 100 });
shutdown.onStop('the step', (code) => console.log(`step ran with ${code}`));
shutdown.atExit((code) => console.log(`at exit ${code}, ${descendants().length} processes left`));
/** A node child that says `up` once its SIGTERM handler is installed. */
const node = (onTerm: string) => new Promise<number>((resolve) => {
  const [command, args] = exitWithParent(process.execPath, ['-e', `process.on('SIGTERM', () => { ${onTerm} }); console.log('up'); setInterval(() => {}, 1000)`]);
  const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'inherit'] });
  child.stdout!.once('data', () => resolve(child.pid!));
});
const shell = spawn('sh', ['-c', 'sleep 300; true'], { stdio: 'ignore' });
const [stops, ignores] = await Promise.all([node('process.exit(0)'), node('')]);
// The shell's sleep too. Only what the fixture started is listed: tsx may have an esbuild child of its own.
while (descendants(shell.pid).length < 1) await new Promise((resolve) => setTimeout(resolve, 20));
console.log(`ready ${[process.pid, stops, ignores, shell.pid, ...descendants(shell.pid).map((p) => p.pid)].join(' ')}`);
if (process.env.SHUTDOWN_FIXTURE === 'throw') setTimeout(() => { throw new Error('the fixture failed'); }, 50);
setInterval(() => undefined, 1 << 30);
