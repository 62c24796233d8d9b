import { spawn, type ChildProcess } from 'node:child_process';
import { appendFileSync, closeSync, existsSync, openSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';

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
 * which stops things in order, and not the broker directly), sent SIGTERM if the orchestrator dies
 * (exitWithParent). A pid file left by a run that died without cleaning up is honoured: that
 * process is stopped first.
 */
export async function spawnManaged(opts: SpawnOptions): Promise<ManagedProcess> {
  await stopStale(opts.pidFile);
  const out = openSync(opts.logFile, 'a');
  let child: ChildProcess;
  try {
    const [command, args] = exitWithParent(opts.command, opts.args);
    child = spawn(command, args, { cwd: opts.cwd, env: { ...process.env, ...opts.env }, stdio: ['ignore', out, out], detached: true });
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

/** Fields of /proc/<pid>/stat after the command name (which is in parentheses and may hold spaces): [0] state, [1] ppid, [19] start time. */
function statFields(pid: number): string[] | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return undefined;
  }
}

/** When a process started (clock ticks since boot, /proc/<pid>/stat field 22): tells it from a later one with its pid. */
function startTimeOf(pid: number): string | undefined {
  return statFields(pid)?.[19];
}

/** A process as /proc shows it: its pid and when it started (so a later process with the same pid is not taken for it). */
export interface ProcessRef { pid: number; start: string }

/**
 * Every process descended from pid (children, their children, …) that still runs, from /proc
 * (none where there is no /proc). A process whose parent died is re-parented and no longer found
 * here: take this list before stopping anything.
 */
export function descendants(pid: number = process.pid): ProcessRef[] {
  let entries: string[];
  try { entries = readdirSync('/proc'); } catch { return []; }
  const children = new Map<number, ProcessRef[]>();
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    const fields = statFields(Number(entry));
    // Z: a zombie is gone already, only not yet waited for.
    if (!fields || fields[0] === 'Z' || fields[19] === undefined) continue;
    const ppid = Number(fields[1]);
    const list = children.get(ppid) ?? [];
    list.push({ pid: Number(entry), start: fields[19] });
    children.set(ppid, list);
  }
  const found: ProcessRef[] = [];
  const queue = [pid];
  while (queue.length > 0) {
    for (const child of children.get(queue.shift()!) ?? []) { found.push(child); queue.push(child.pid); }
  }
  return found;
}

/** Whether the process is still the one that was listed (running, and not a zombie). */
export function isRunning(ref: ProcessRef): boolean {
  const fields = statFields(ref.pid);
  return fields !== undefined && fields[0] !== 'Z' && fields[19] === ref.start;
}

/** Sends sig to each listed process still running; returns those it was sent to. */
export function signalAll(refs: readonly ProcessRef[], sig: NodeJS.Signals): ProcessRef[] {
  const running = refs.filter(isRunning);
  for (const ref of running) signal(ref.pid, sig);
  return running;
}

/** SIGTERM to each listed process still running, SIGKILL to those left after graceMs; resolves, once they are gone, with how many needed SIGKILL. */
export async function terminate(refs: readonly ProcessRef[], graceMs: number): Promise<number> {
  const deadline = Date.now() + graceMs;
  let left = signalAll(refs, 'SIGTERM');
  while (left.length > 0 && Date.now() < deadline) {
    await sleep(100);
    left = left.filter(isRunning);
  }
  const killed = signalAll(left, 'SIGKILL');
  // SIGKILL is not instant: what runs next (removing a data directory) must find them gone.
  for (let i = 0; i < 40 && killed.some(isRunning); i++) await sleep(50);
  return killed.length;
}

let setpriv: string | null | undefined;

/**
 * The command line that runs `command` so that it gets SIGTERM when the process that spawned it
 * dies, even by SIGKILL (Linux's parent-death signal, set by util-linux's setpriv, which then execs
 * the command: same pid, nothing in between). Where setpriv is missing, the command as it is.
 */
export function exitWithParent(command: string, args: readonly string[]): [string, string[]] {
  if (setpriv === undefined) {
    setpriv = process.platform === 'linux'
      ? (process.env.PATH ?? '').split(delimiter).map((dir) => join(dir, 'setpriv')).find((file) => existsSync(file)) ?? null
      : null;
  }
  return setpriv ? [setpriv, ['--pdeathsig', 'SIGTERM', '--', command, ...args]] : [command, [...args]];
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

/** Whether pid runs: a zombie (exited, not yet reaped by its parent, or by an init that is slow to) does not. */
export function isAlive(pid: number): boolean {
  try { process.kill(pid, 0); } catch { return false; }
  return statFields(pid)?.[0] !== 'Z';
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
