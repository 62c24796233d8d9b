// How every command that starts processes (npm start, npm test, npm run stack, npm run bench,
// npm run compose) stops them: on SIGINT, SIGTERM or SIGHUP, on its own failure (an uncaught
// exception or rejection, or a call to exit()), and when the process that started it went away
// (npm killed: this program is re-parented, and nobody would signal it), one cleanup runs once.
// It runs the command's own stop steps, last registered first (services before the broker they
// use), each given the exit code; whatever of this program's process tree still runs after them
// gets SIGTERM, and SIGKILL once `graceMs` from the start have passed; then the atExit functions
// run (removing temporary directories) and the process exits.
//
// npm 10 and 11 pass SIGINT and SIGTERM to the script's shell, which (dash) neither passes them on
// nor execs the program: the package.json scripts therefore `exec` it, so npm signals the program
// itself. SIGHUP, or npm killed outright, reach nobody: the parent watch covers those.
// Long-lived children are started with a parent-death signal too (process.ts, exitWithParent), so
// they stop even when this program is SIGKILLed and no cleanup can run.
import { descendants, isRunning, terminate, type ProcessRef } from './process.js';

export const SHUTDOWN_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;
export type ShutdownSignal = (typeof SHUTDOWN_SIGNALS)[number];

const SIGNAL_NUMBERS: Record<ShutdownSignal, number> = { SIGHUP: 1, SIGINT: 2, SIGTERM: 15 };

/** A stop step: given the exit code the program is about to exit with. */
export type StopStep = (code: number) => unknown;

export interface ShutdownOptions {
  log: (line: string) => void;
  /** How long the stop steps and then SIGTERM may take before everything left is SIGKILLed; default 15 s. */
  graceMs?: number;
  /** The exit code after a signal (or the parent going away, counted as SIGHUP); default 128 + the signal's number. */
  signalExitCode?: (signal: ShutdownSignal) => number;
  /** How often the parent is checked; default 300 ms. 0: not watched. */
  watchParentMs?: number;
  /** Ends the process (tests replace it); default process.exit. */
  exit?: (code: number) => void;
}

export interface Shutdown {
  /** Adds a stop step; returns a function that removes it again (a step whose work is done). */
  onStop(name: string, step: StopStep): () => void;
  /** Runs last, after every process is gone, even when the steps ran out of time (temporary directories, a last line). */
  atExit(last: (code: number) => void): void;
  /** Runs the cleanup once and exits with code (the first caller's: later calls wait for the same run). */
  exit(code: number, reason?: string): Promise<never>;
  /** True once the cleanup started: work still running may fail harmlessly, and need not say so. */
  readonly stopping: boolean;
}

export const DEFAULT_GRACE_MS = 15_000;

let installed: Shutdown | undefined;

/** Installs the handlers (once per process: a second call returns the first Shutdown). */
export function installShutdown({ log, graceMs = DEFAULT_GRACE_MS, signalExitCode = (sig) => 128 + SIGNAL_NUMBERS[sig], watchParentMs = 300, exit = (code) => process.exit(code) }: ShutdownOptions): Shutdown {
  if (installed) return installed;
  const steps: Array<{ name: string; step: StopStep }> = [];
  const lasts: Array<(code: number) => void> = [];
  const say = (line: string) => { try { log(line); } catch { /* no output left */ } };
  let running: Promise<never> | undefined;

  const cleanup = async (code: number, reason: string | undefined): Promise<never> => {
    const deadline = Date.now() + graceMs;
    if (reason) say(reason);
    // Before anything stops: a child that exits leaves its own children re-parented, out of reach.
    const tree = descendants();
    let timer: NodeJS.Timeout | undefined;
    const timeUp = new Promise<'late'>((resolve) => { timer = setTimeout(() => resolve('late'), graceMs); });
    const ordered = (async () => {
      for (const { name, step } of [...steps].reverse()) {
        try { await step(code); } catch (err) { say(`stopping ${name}: ${(err as Error).message}`); }
      }
      return 'done' as const;
    })();
    const late = (await Promise.race([ordered, timeUp])) === 'late';
    clearTimeout(timer);
    const left = unique([...tree, ...descendants()]).filter(isRunning);
    const killed = await terminate(left, late ? 0 : deadline - Date.now());
    if (killed) say(`killed ${killed} process(es) still running after ${(graceMs / 1000).toFixed(0)} s`);
    for (const last of lasts) { try { last(code); } catch (err) { say((err as Error).message); } }
    exit(code);
    // exit() ends the process; a replaced one (tests) leaves this pending, as a real exit would.
    return new Promise<never>(() => undefined);
  };

  const shutdown: Shutdown = {
    onStop(name, step) {
      const entry = { name, step };
      steps.push(entry);
      return () => { const i = steps.indexOf(entry); if (i >= 0) steps.splice(i, 1); };
    },
    atExit(last) { lasts.push(last); },
    exit(code, reason) {
      running ??= cleanup(code, reason);
      return running;
    },
    get stopping() { return running !== undefined; },
  };

  for (const sig of SHUTDOWN_SIGNALS) {
    process.on(sig, () => {
      // npm passes a terminal's Ctrl-C on, which the program also got as a member of the group: one stop.
      if (running) { say(`${sig}: already stopping (everything is gone within ${(graceMs / 1000).toFixed(0)} s)`); return; }
      void shutdown.exit(signalExitCode(sig), `${sig}: stopping`);
    });
  }
  const fail = (err: unknown) => {
    // Output to a reader that went away (npm killed, a closed pipe) fails each write: stop, quietly.
    const outputGone = (err as NodeJS.ErrnoException | undefined)?.code === 'EPIPE';
    if (!outputGone) say(`failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    void shutdown.exit(1);
  };
  process.on('uncaughtException', fail);
  process.on('unhandledRejection', fail);
  if (watchParentMs > 0) {
    const parent = process.ppid;
    const watch = setInterval(() => {
      if (process.ppid === parent) return;
      clearInterval(watch);
      void shutdown.exit(signalExitCode('SIGHUP'), `the parent process (${parent}) went away: stopping`);
    }, watchParentMs);
    watch.unref();
  }
  installed = shutdown;
  return shutdown;
}

function unique(refs: ProcessRef[]): ProcessRef[] {
  const seen = new Set<string>();
  return refs.filter((r) => { const key = `${r.pid} ${r.start}`; if (seen.has(key)) return false; seen.add(key); return true; });
}
