// Runs podman (and podman-compose) with the project's containers.conf, so the host's own podman
// configuration is never edited: CONTAINERS_CONF is read by podman, buildah and the containers
// podman-compose starts.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { repoRoot } from '../stack/paths.js';

export const containersConf = join(repoRoot, 'deploy/podman/containers.conf');

export function podmanEnv(env: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  return { ...env, CONTAINERS_CONF: env.CONTAINERS_CONF ?? containersConf };
}

export interface RunOptions {
  cwd?: string;
  /** Called with each line of output as it comes (build steps); otherwise output is only kept. */
  onLine?: (line: string) => void;
  /** Resolve with the result instead of rejecting when the command exits non-zero. */
  allowFailure?: boolean;
}

export interface RunResult { code: number; stdout: string; stderr: string }

/** Runs a command to completion; rejects with the last lines of its output when it fails. */
export function run(cmd: string, args: string[], opts: RunOptions = {}): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd: opts.cwd ?? repoRoot, env: podmanEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    const lines = (chunk: Buffer) => {
      if (!opts.onLine) return;
      for (const line of chunk.toString('utf8').split('\n')) if (line.trim()) opts.onLine(line.trimEnd());
    };
    child.stdout!.on('data', (d: Buffer) => { stdout += d; lines(d); });
    child.stderr!.on('data', (d: Buffer) => { stderr += d; lines(d); });
    child.on('error', (err) => reject(new Error(`cannot run ${cmd}: ${err.message}`)));
    child.on('exit', (code, signal) => {
      const result = { code: code ?? (signal ? 128 : 1), stdout, stderr };
      if (result.code === 0 || opts.allowFailure) return resolve(result);
      const tail = `${stdout}\n${stderr}`.trim().split('\n').slice(-25).join('\n');
      reject(new Error(`${cmd} ${args.join(' ')} exited with ${result.code}:\n${tail}`));
    });
  });
}

export const podman = (args: string[], opts?: RunOptions) => run('podman', args, opts);

export async function imageExists(name: string): Promise<boolean> {
  return (await podman(['image', 'exists', name], { allowFailure: true })).code === 0;
}

/** The image's size in bytes, as `podman images` counts it (every layer, shared ones included). */
export async function imageSize(name: string): Promise<number> {
  const { stdout } = await podman(['image', 'inspect', '--format', '{{.Size}}', name]);
  return Number(stdout.trim());
}

export const megabytes = (bytes: number) => `${Math.round(bytes / 1e6)} MB`;

/** A container's status (running, exited, …, or missing) and exit code. */
export async function containerState(name: string): Promise<{ status: string; exitCode: number }> {
  const r = await podman(['inspect', '--format', '{{.State.Status}} {{.State.ExitCode}}', name], { allowFailure: true });
  if (r.code !== 0) return { status: 'missing', exitCode: -1 };
  const [status, code] = r.stdout.trim().split(' ');
  return { status: status ?? 'unknown', exitCode: Number(code) };
}

export async function logsTail(name: string, lines = 30): Promise<string> {
  const r = await podman(['logs', '--tail', String(lines), name], { allowFailure: true });
  return `${r.stdout}${r.stderr}`.trim();
}
