// Runs Switchyard's own programs as child processes: from source (services/<name>/src/main.ts)
// through tsx, as `npm start` and the tests do, or built (services/<name>/dist/main.js, plain node),
// as the container image and the benchmarks do.
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { repoRoot } from './paths.js';
import { exitWithParent, sleep } from './process.js';
import { registerEnvSecrets, serviceLogFile } from './test-logs.js';

export interface ServiceProcess {
  name: string;
  child: ChildProcess;
  /** Resolves with the exit code (or the signal name). */
  exited: Promise<number | string>;
  /** Every line the process wrote (JSON logs), for tests to inspect. */
  output: string[];
  stop(signal?: NodeJS.Signals, graceMs?: number): Promise<number | string>;
}

export interface ServiceSpawnOptions {
  env: NodeJS.ProcessEnv;
  /** Append the output here too (default under a test run: one file per process in TEST_LOG_DIR, which the run scans for secrets). */
  logFile?: string;
  /** Echo each line (tests debugging). */
  echo?: boolean;
  /** Source through tsx (the default), or the output of `npm run build`. */
  code?: ServiceCode;
}

/** How a service's code is run: its TypeScript through tsx, or the JavaScript `npm run build` wrote. */
export type ServiceCode = 'source' | 'built';

/** node's arguments for a service: the built entry resolves @switchyard/platform to its dist/ too (no `source` condition). */
export function serviceArgs(name: string, code: ServiceCode = 'source'): string[] {
  return code === 'built'
    ? [join(repoRoot, 'services', name, 'dist', 'main.js')]
    : ['--conditions=source', '--import', 'tsx', join(repoRoot, 'services', name, 'src', 'main.ts')];
}

export function spawnService(name: string, { env, logFile: givenLogFile, echo = false, code }: ServiceSpawnOptions): ServiceProcess {
  registerEnvSecrets(env, name);
  // SIGTERM (its graceful stop) if whatever spawned it dies without stopping it.
  const [command, args] = exitWithParent(process.execPath, serviceArgs(name, code));
  const child = spawn(command, args, {
    cwd: repoRoot,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output: string[] = [];
  const logFile = givenLogFile ?? serviceLogFile(name, child.pid);
  let file: ReturnType<typeof createWriteStream> | undefined;
  if (logFile) { mkdirSync(dirname(logFile), { recursive: true }); file = createWriteStream(logFile, { flags: 'a' }); }
  const onData = (chunk: Buffer) => {
    const text = chunk.toString('utf8');
    file?.write(text);
    for (const line of text.split('\n')) if (line) { output.push(line); if (echo) process.stderr.write(`[${name}] ${line}\n`); }
  };
  child.stdout!.on('data', onData);
  child.stderr!.on('data', onData);
  const exited = new Promise<number | string>((resolve) => child.once('exit', (code, sig) => { file?.end(); resolve(code ?? sig ?? 'unknown'); }));
  const stop = async (signal: NodeJS.Signals = 'SIGTERM', graceMs = 30_000) => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill(signal);
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      const result = await exited;
      clearTimeout(timer);
      return result;
    }
    return exited;
  };
  return { name, child, exited, output, stop };
}

/** Polls GET url until it answers 2xx; fails early if the process exits. */
export async function waitForHttp(url: string, timeoutMs: number, proc?: ServiceProcess): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let exit: number | string | undefined;
  void proc?.exited.then((code) => { exit = code; });
  while (Date.now() < deadline) {
    if (exit !== undefined) throw new Error(`${proc?.name} exited (${exit}) before ${url} was ready:\n${proc?.output.slice(-20).join('\n')}`);
    try { if ((await fetch(url)).ok) return; } catch { /* not listening yet */ }
    await sleep(200);
  }
  throw new Error(`${url} not ready after ${timeoutMs} ms${proc ? `:\n${proc.output.slice(-20).join('\n')}` : ''}`);
}

/** Runs a one-shot program (services/setup) to completion. */
export async function runOnce(name: string, opts: ServiceSpawnOptions): Promise<void> {
  const proc = spawnService(name, opts);
  const code = await proc.exited;
  if (code !== 0) throw new Error(`${name} exited with ${code}:\n${proc.output.slice(-30).join('\n')}`);
}
