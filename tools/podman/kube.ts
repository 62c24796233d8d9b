// The Kubernetes manifests under `podman kube play` (podman 4.3): an overlay made on the fly on top of
// deploy/overlays/small points the services at containerised Kafka and registry and at the image
// built here, kustomize renders it, and what podman can run is run:
// - Deployments and ConfigMaps as they are;
// - Secrets become podman secrets (kube play 4.3 reads envFrom.secretRef from podman's secret store,
//   as a JSON object of base64 values, not from Secret objects in the YAML);
// - the set-up Job becomes a Pod with the Job's pod template (kube play 4.3 has no Job), waited for.
// Namespaces, Services, the autoscaler, disruption budgets and the service account have no podman
// equivalent and are left out (deploy/README.md says what only a real cluster checks).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { parseAllDocuments, stringify } from 'yaml';
import { repoRoot } from '../stack/paths.js';
import { containerState, logsTail, podman, run } from './podman.js';

export interface KubeObject { apiVersion: string; kind: string; metadata: { name: string; namespace?: string; labels?: Record<string, string> }; data?: Record<string, string>; spec?: Record<string, unknown> & { template?: { metadata?: { labels?: Record<string, string> }; spec: Record<string, unknown> } } }

export interface KubeSettings {
  kafkaBrokers: string;
  registryUrl: string;
  adminToken: string;
  image: string;
  /** Passed to the SSRF guard, so webhooks may reach a receiver on the podman network. */
  allowedCidrs?: string;
}

/** kustomization.yaml of an overlay on deploy/overlays/small, written in dir. */
export function podmanOverlay(dir: string, s: KubeSettings): string {
  const [name, tag] = splitImage(s.image);
  return stringify({
    apiVersion: 'kustomize.config.k8s.io/v1beta1',
    kind: 'Kustomization',
    namespace: 'switchyard',
    resources: [relative(dir, join(repoRoot, 'deploy/overlays/small'))],
    configMapGenerator: [{
      name: 'switchyard-common', behavior: 'merge',
      literals: [`KAFKA_BROKERS=${s.kafkaBrokers}`, `SCHEMA_REGISTRY_URL=${s.registryUrl}`, ...(s.allowedCidrs ? [`SWITCHYARD_ALLOWED_CIDRS=${s.allowedCidrs}`] : [])],
    }],
    // As `kubectl create secret generic switchyard-control --from-literal=...` would make it.
    secretGenerator: [{ name: 'switchyard-control', options: { disableNameSuffixHash: true }, literals: [`SWITCHYARD_ADMIN_TOKEN=${s.adminToken}`] }],
    images: [{ name: 'registry.example.com/switchyard', newName: name, newTag: tag }],
  });
}

function splitImage(image: string): [string, string] {
  const at = image.lastIndexOf(':');
  return at > image.lastIndexOf('/') ? [image.slice(0, at), image.slice(at + 1)] : [image, 'latest'];
}

export interface KubePlan {
  /** podman secret name → the JSON podman kube play reads (key → base64 value). */
  secrets: Map<string, string>;
  /** One Pod per Job, with the ConfigMaps it reads. */
  jobs: KubeObject[];
  /** Deployments and ConfigMaps. */
  workloads: KubeObject[];
  /** Kinds with no podman equivalent, by kind. */
  leftOut: string[];
}

/** Splits rendered manifests into what podman kube play runs and what it cannot. */
export function planKube(objects: KubeObject[]): KubePlan {
  const plan: KubePlan = { secrets: new Map(), jobs: [], workloads: [], leftOut: [] };
  for (const o of objects) {
    if (o.kind === 'Secret') plan.secrets.set(o.metadata.name, JSON.stringify(o.data ?? {}));
    else if (o.kind === 'Job') plan.jobs.push(jobAsPod(o));
    else if (o.kind === 'Deployment' || o.kind === 'ConfigMap') plan.workloads.push(o);
    else plan.leftOut.push(`${o.kind}/${o.metadata.name}`);
  }
  return plan;
}

/** A Job's pod template as a Pod of the same name; restartPolicy stays the Job's (OnFailure retries). */
export function jobAsPod(job: KubeObject): KubeObject {
  const template = job.spec!.template!;
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name: job.metadata.name, labels: template.metadata?.labels ?? {} }, spec: template.spec };
}

export async function renderKube(s: KubeSettings): Promise<KubeObject[]> {
  const dir = mkdtempSync(join(tmpdir(), 'switchyard-kube-'));
  try {
    writeFileSync(join(dir, 'kustomization.yaml'), podmanOverlay(dir, s));
    const { stdout } = await run('kubectl', ['kustomize', dir]);
    return parseAllDocuments(stdout).map((d) => d.toJS() as KubeObject).filter(Boolean);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export interface PlayedKube { files: string[]; secrets: string[]; dir: string }

/** Creates the secrets, plays each Job pod and waits for it to exit 0, then plays the workloads. */
export async function playKube(plan: KubePlan, network: string, log: (line: string) => void, timeoutMs = 300_000): Promise<PlayedKube> {
  const dir = mkdtempSync(join(tmpdir(), 'switchyard-kube-play-'));
  const played: PlayedKube = { files: [], secrets: [], dir };
  // Pods left by an interrupted run would make kube play refuse ("pod already exists").
  const podNames = [...plan.jobs.map((j) => j.metadata.name), ...plan.workloads.filter((o) => o.kind === 'Deployment').map((d) => `${d.metadata.name}-pod-0`)];
  await podman(['pod', 'rm', '--force', '--ignore', ...podNames], { allowFailure: true });
  for (const [name, json] of plan.secrets) {
    // From a file: podman reads `-` only from a FIFO, and a child's piped stdin is a socket.
    const file = join(dir, `${name}.secret.json`);
    writeFileSync(file, json, { mode: 0o600 });
    await podman(['secret', 'rm', name], { allowFailure: true });
    await podman(['secret', 'create', name, file]);
    rmSync(file);
    played.secrets.push(name);
  }
  const configMaps = plan.workloads.filter((o) => o.kind === 'ConfigMap');
  for (const job of plan.jobs) {
    const file = join(dir, `${job.metadata.name}.yaml`);
    writeFileSync(file, [...configMaps, job].map((o) => stringify(o)).join('---\n'));
    log(`podman kube play ${job.metadata.name} (the Job, as a pod)`);
    await podman(['kube', 'play', '--network', network, file]);
    played.files.push(file);
    await waitForExit(`${job.metadata.name}-${containerNameOf(job)}`, timeoutMs);
  }
  const file = join(dir, 'workloads.yaml');
  writeFileSync(file, plan.workloads.map((o) => stringify(o)).join('---\n'));
  log(`podman kube play the Deployments (${plan.workloads.filter((o) => o.kind === 'Deployment').map((o) => o.metadata.name).join(', ')})`);
  await podman(['kube', 'play', '--network', network, file]);
  played.files.push(file);
  return played;
}

export async function downKube(played: PlayedKube): Promise<void> {
  for (const file of [...played.files].reverse()) await podman(['kube', 'down', file], { allowFailure: true });
  for (const name of played.secrets) await podman(['secret', 'rm', name], { allowFailure: true });
  rmSync(played.dir, { recursive: true, force: true });
}

const containerNameOf = (pod: KubeObject) => ((pod.spec as { containers: Array<{ name: string }> }).containers[0]!).name;

async function waitForExit(container: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const state = await containerState(container);
    if (state.status === 'exited' && state.exitCode === 0) return;
    if (Date.now() > deadline) throw new Error(`${container} did not finish in time (${state.status} ${state.exitCode}):\n${await logsTail(container, 20)}`);
    await new Promise((r) => setTimeout(r, 1000));
  }
}

/** The address of a kube-played Deployment's pod (its first replica) on the podman network. */
export async function podAddress(deployment: string): Promise<string> {
  const infra = (await podman(['pod', 'inspect', '--format', '{{.InfraContainerID}}', `${deployment}-pod-0`])).stdout.trim();
  const ip = (await podman(['inspect', '--format', '{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}', infra])).stdout.trim();
  if (!ip) throw new Error(`${deployment}-pod-0 has no address`);
  return ip;
}
