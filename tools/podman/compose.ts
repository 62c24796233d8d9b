// docker-compose.yml under podman-compose 1.0.3 (Debian 12's), with the three things that version
// leaves out done here from the compose file itself, so the file stays the one Docker users run:
// - depends_on conditions (service_healthy, service_completed_successfully): a service starts only
//   once what it depends on is healthy or has exited 0. Without systemd podman runs no health
//   checks by itself, so each is run with `podman healthcheck run` until it passes;
// - the default network's IPAM subnet (SWITCHYARD_ALLOWED_CIDRS lets the demo receiver through
//   the SSRF guard on that subnet only);
// - removing that network on `down`.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { repoRoot } from '../stack/paths.js';
import { containerState, logsTail, podman, run } from './podman.js';

export const composeFiles = ['docker-compose.yml', 'deploy/podman/compose.images.yml'];

type Condition = 'service_started' | 'service_healthy' | 'service_completed_successfully';
interface ComposeService {
  image?: string;
  profiles?: string[];
  depends_on?: Record<string, { condition?: Condition }> | string[];
}
interface ComposeFile { services: Record<string, ComposeService>; networks?: { default?: { ipam?: { config?: Array<{ subnet?: string }> } } } }

export function readCompose(): ComposeFile {
  return parseYaml(readFileSync(join(repoRoot, 'docker-compose.yml'), 'utf8'), { merge: true }) as ComposeFile;
}

/** ${NAME:-default} as compose substitutes it. */
export function substitute(text: string, env: NodeJS.ProcessEnv = process.env): string {
  return text.replace(/\$\{(\w+)(?::?-([^}]*))?\}/g, (_, name: string, fallback: string | undefined) => env[name] || fallback || '');
}

function dependencies(service: ComposeService): Array<[string, Condition]> {
  const deps = service.depends_on ?? {};
  if (Array.isArray(deps)) return deps.map((d) => [d, 'service_started']);
  return Object.entries(deps).map(([name, d]) => [name, d.condition ?? 'service_started']);
}

/** The services in an order where each comes after everything it depends on. */
export function startOrder(file: ComposeFile, wanted: string[]): string[] {
  const order: string[] = [];
  const visit = (name: string, path: string[]) => {
    if (order.includes(name)) return;
    if (path.includes(name)) throw new Error(`depends_on cycle: ${[...path, name].join(' -> ')}`);
    const service = file.services[name];
    if (!service) throw new Error(`no service ${name} in docker-compose.yml`);
    for (const [dep] of dependencies(service)) visit(dep, [...path, name]);
    order.push(name);
  };
  for (const name of wanted) visit(name, []);
  return order;
}

export const containerName = (project: string, service: string) => `${project}_${service}_1`;
export const networkName = (project: string) => `${project}_default`;

export interface ComposeOptions {
  project: string;
  /** Services to start with what they depend on; default: every service without a profile that has an image here. */
  services?: string[];
  log: (line: string) => void;
  /** How long one service may take to become healthy or to finish. */
  timeoutMs?: number;
}

/** The services started when none are named: all but those behind a profile, and Grafana (no image here). */
export function defaultServices(file: ComposeFile): string[] {
  return Object.entries(file.services).filter(([name, s]) => !s.profiles?.length && name !== 'grafana').map(([name]) => name);
}

export async function composeUp(opts: ComposeOptions): Promise<void> {
  const file = readCompose();
  const order = startOrder(file, opts.services ?? defaultServices(file));
  const network = networkName(opts.project);
  const subnet = file.networks?.default?.ipam?.config?.[0]?.subnet;
  if ((await podman(['network', 'exists', network], { allowFailure: true })).code !== 0) {
    await podman(['network', 'create', '--label', `io.podman.compose.project=${opts.project}`, ...(subnet ? ['--subnet', substitute(subnet)] : []), network]);
  }
  for (const name of order) {
    for (const [dep, condition] of dependencies(file.services[name]!)) await waitFor(opts.project, dep, condition, opts);
    opts.log(`starting ${name}`);
    await compose(opts.project, ['up', '-d', '--no-deps', '--no-build', name]);
  }
}

/** Stops and removes every container, volume and the network of the project. */
export async function composeDown(project: string): Promise<void> {
  await compose(project, ['down', '-v', '-t', '30']);
  await podman(['network', 'rm', '--force', networkName(project)], { allowFailure: true });
}

/** What is left of a project after `down`: containers, pods, networks, volumes (names). */
export async function leftovers(project: string): Promise<string[]> {
  const label = `label=io.podman.compose.project=${project}`;
  const list = async (args: string[]) => (await podman(args)).stdout.split('\n').map((l) => l.trim()).filter(Boolean);
  return [
    ...(await list(['ps', '-a', '--filter', label, '--format', '{{.Names}}'])).map((n) => `container ${n}`),
    ...(await list(['pod', 'ps', '--filter', `name=${project}`, '--format', '{{.Name}}'])).map((n) => `pod ${n}`),
    ...(await list(['network', 'ls', '--filter', `name=${networkName(project)}`, '--format', '{{.Name}}'])).map((n) => `network ${n}`),
    ...(await list(['volume', 'ls', '--filter', label, '--format', '{{.Name}}'])).map((n) => `volume ${n}`),
  ];
}

export function compose(project: string, args: string[]) {
  return run('podman-compose', ['--no-ansi', '-p', project, ...composeFiles.flatMap((f) => ['-f', f]), ...args]);
}

async function waitFor(project: string, service: string, condition: Condition, opts: ComposeOptions): Promise<void> {
  const name = containerName(project, service);
  const deadline = Date.now() + (opts.timeoutMs ?? 300_000);
  let said = false;
  for (;;) {
    const state = await containerState(name);
    if (condition === 'service_completed_successfully' && state.status === 'exited') {
      if (state.exitCode === 0) return;
      throw new Error(`${service} exited with ${state.exitCode}:\n${await logsTail(name)}`);
    }
    if (state.status === 'running') {
      if (condition === 'service_started') return;
      if (condition === 'service_healthy' && (await podman(['healthcheck', 'run', name], { allowFailure: true })).code === 0) return;
    } else if (state.status === 'exited' && condition !== 'service_completed_successfully') {
      throw new Error(`${service} exited with ${state.exitCode} before it was ${condition === 'service_healthy' ? 'healthy' : 'started'}:\n${await logsTail(name)}`);
    }
    if (Date.now() > deadline) throw new Error(`${service} did not become ${condition.replace('service_', '').replace(/_/g, ' ')} in time:\n${await logsTail(name)}`);
    if (!said) { opts.log(`waiting for ${service} (${condition.replace('service_', '').replace(/_/g, ' ')})`); said = true; }
    await new Promise((r) => setTimeout(r, 1000));
  }
}
