import { spawn, type ChildProcess } from 'node:child_process';
import { appendFileSync, closeSync, existsSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';

/**
 * The environment variable naming a file where every process spawned here is listed (`pid start`,
 * start as /proc gives it): the test runner sets it for the test files, and kills at the end what
 * is still running of theirs. A file the runner cut off at its timeout never stopped its JVMs,
 * which run in process groups of their own.
 */
export const SPAWNED_PIDS_FILE = 'SWITCHYARD_SPAWNED_PIDS';

/** A background process of the local stack (a JVM): logs to a file, leaves a pid file, stops in order. */
export interface ManagedProcess {
  name: string;
  pid: number;
  logFile: string;
  /** SIGTERM, then SIGKILL after graceMs; resolves when the process is gone. */
  stop(graceMs?: number): Promise<void>;
  /** SIGKILL at once (fault tests). */
  kill(): Promise<void>;
  exited: Promise<number | null>;
}

export interface SpawnOptions {
  name: string;
  command: string;
  args: string[];
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  logFile: string;
  pidFile: string;
}

/**
 * Starts a process in its own process group (so a Ctrl-C at the terminal reaches our orchestrator,
 * which stops things in order, and not the broker directly). A pid file left by a run that died
 * without cleaning up is honoured: that process is stopped first.
 */
export async function spawnManaged(opts: SpawnOptions): Promise<ManagedProcess> {
  await stopStale(opts.pidFile);
  const out = openSync(opts.logFile, 'a');
  let child: ChildProcess;
  try {
    child = spawn(opts.command, opts.args, { cwd: opts.cwd, env: { ...process.env, ...opts.env }, stdio: ['ignore', out, out], detached: true });
  } finally {
    closeSync(out);
  }
  const pid = child.pid;
  if (pid === undefined) throw new Error(`could not start ${opts.name}`);
  writeFileSync(opts.pidFile, String(pid));
  const listed = process.env[SPAWNED_PIDS_FILE];
  if (listed) appendFileSync(listed, `${pid} ${startTimeOf(pid) ?? ''}\n`);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => { rmSync(opts.pidFile, { force: true }); resolve(code); }));
  // The orchestrator must not keep running because of its children, nor leave them behind on a crash.
  child.unref();
  // While stopping, the child's exit is awaited: it must keep the event loop alive. Unreferenced, a
  // broker that outlived its grace period was SIGKILLed by the timer, the timer was then the last
  // handle, and the loop ended before the exit arrived (a cluster suite's teardown: node 2 of three,
  // stopped together, waited 20 s for its quorum; "Promise resolution is still pending").
  const stop = async (graceMs = 20_000) => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.ref();
    signal(pid, 'SIGTERM');
    const timer = setTimeout(() => signal(pid, 'SIGKILL'), graceMs);
    await exited;
    clearTimeout(timer);
  };
  const kill = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.ref();
    signal(pid, 'SIGKILL');
    await exited;
  };
  return { name: opts.name, pid, logFile: opts.logFile, stop, kill, exited };
}

function signal(pid: number, sig: NodeJS.Signals): void {
  try { process.kill(pid, sig); } catch { /* already gone */ }
}

/** When a process started (clock ticks since boot, /proc/<pid>/stat field 22): tells it from a later one with its pid. */
function startTimeOf(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name, which is in parentheses and may hold spaces.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
  } catch {
    return undefined;
  }
}

/** SIGKILLs every process listed in `file` (SPAWNED_PIDS_FILE) that still runs; returns how many. */
export function killListed(file: string): number {
  if (!existsSync(file)) return 0;
  let killed = 0;
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    const [pidText, start] = line.split(' ');
    const pid = Number(pidText);
    if (!Number.isInteger(pid) || pid <= 0 || !isAlive(pid)) continue;
    if (start && startTimeOf(pid) !== start) continue; // the pid belongs to another process now
    signal(pid, 'SIGKILL');
    killed++;
  }
  return killed;
}

export function isAlive(pid: number): boolean {
  try { process.kill(pid, 0); return true; } catch { return false; }
}

async function stopStale(pidFile: string): Promise<void> {
  if (!existsSync(pidFile)) return;
  const pid = Number(readFileSync(pidFile, 'utf8'));
  rmSync(pidFile, { force: true });
  if (!Number.isInteger(pid) || pid <= 0 || !isAlive(pid)) return;
  signal(pid, 'SIGTERM');
  for (let i = 0; i < 100 && isAlive(pid); i++) await sleep(100);
  if (isAlive(pid)) signal(pid, 'SIGKILL');
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Polls check() until it resolves true or the time is up; reports the log tail on failure. */
export async function waitUntil(what: string, check: () => Promise<boolean>, timeoutMs: number, proc?: ManagedProcess): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let exitCode: number | null | undefined;
  void proc?.exited.then((code) => { exitCode = code; });
  while (Date.now() < deadline) {
    if (exitCode !== undefined) throw new Error(`${what}: the process exited (${exitCode}); see ${proc?.logFile}\n${logTail(proc?.logFile)}`);
    try { if (await check()) return; } catch { /* not yet */ }
    await sleep(250);
  }
  throw new Error(`${what}: not ready after ${timeoutMs} ms; see ${proc?.logFile ?? 'the log'}\n${logTail(proc?.logFile)}`);
}

function logTail(file: string | undefined, lines = 30): string {
  if (!file || !existsSync(file)) return '';
  return readFileSync(file, 'utf8').split('\n').slice(-lines).join('\n');
}
