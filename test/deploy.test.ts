// The deployment files, checked without a cluster or a Docker engine:
// - Kubernetes: `kubectl kustomize` builds the base and every overlay; every rendered object
//   validates against the Kubernetes schemas (kubernetes-models, and the Prometheus Operator's and
//   KEDA's CRD models); probes, resources, security context, Secret references, disruption budgets
//   and autoscalers hold together. Every rollout replaces one pod at a time. The production overlay
//   deploys what the scale-out suites prove: at least two replicas of every service,
//   each behind a disruption budget of one pod, spread over zones and nodes, topics with three
//   replicas (so min.insync.replicas=2), and no transactional id set anywhere (fanout and
//   audiences derive one per input partition, so they need no StatefulSet). It connects to Kafka
//   with SASL_SSL and SCRAM, each workload (and KEDA's scaler) as its service's own user, and to
//   the registry over https, every credential a file of a read-only Secret volume (no secret in a
//   ConfigMap or an environment value); base and small need no credentials but control's token.
// - Prometheus: `promtool check rules` accepts the alert rules, `promtool test rules` shows each
//   alert fires when it should, and the PrometheusRule carries the same rules.
// - Every metric the Grafana dashboard and the alert rules query is exported by a running service
//   (the services are started against the real broker and registry and scraped).
// - `docker-compose config` accepts docker-compose.yml, and with deploy/compose/kafka-sasl-ssl.yml on
//   top every service reads its Kafka and registry credentials from Compose secret files.
// - The Dockerfile: every file it copies exists and is not excluded by .dockerignore, every npm
//   workspace is in it, the built code imports production dependencies only, and its start
//   command runs the built services.
// A test whose tool is not installed (kubectl, promtool, docker-compose) is skipped with a
// message; .ci/run installs them.
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { join, relative } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { parse as parseYaml, parseAllDocuments } from 'yaml';
import * as kubernetesModels from 'kubernetes-models';
import * as prometheusOperatorModels from '@kubernetes-models/prometheus-operator';
import * as kedaModels from '@kubernetes-models/keda';
import { replicationConfigs } from '@switchyard/platform/kafka/topics';
import { freePort } from '../tools/stack/ports.js';
import { repoRoot } from '../tools/stack/paths.js';
import { pipelineEnv, setupTopics, startService, type RunningService } from './support/services.js';
import { uniquePrefix } from './support/stack.js';

const deployDir = join(repoRoot, 'deploy');
const read = (path: string) => readFileSync(join(repoRoot, path), 'utf8');

/** The path of a command, or undefined when it is not installed. */
function which(command: string): string | undefined {
  const r = spawnSync('sh', ['-c', `command -v ${command}`], { encoding: 'utf8' });
  return r.status === 0 ? r.stdout.trim() : undefined;
}

function run(command: string, args: string[], opts: { cwd?: string; input?: string; env?: NodeJS.ProcessEnv } = {}): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(command, args, { cwd: opts.cwd ?? repoRoot, input: opts.input, env: opts.env, encoding: 'utf8', maxBuffer: 64 << 20 });
  return { status: r.status, stdout: r.stdout ?? '', stderr: (r.stderr ?? '') + (r.error ? String(r.error) : '') };
}

const missing = (tool: string, pkg: string) => `${tool} is not installed (Debian: apt-get install ${pkg}; .ci/run installs it)`;

// ---------------------------------------------------------------------------------------------
// Kubernetes

type K8sObject = { apiVersion: string; kind: string; metadata: { name: string; namespace?: string; labels?: Record<string, string> }; [k: string]: any };

/** apiVersion/kind → the model class, from every model package. */
const models = new Map<string, new (data: any) => { validate(): void }>();
(function collect(ns: unknown, depth = 0) {
  if (depth > 4 || !ns || typeof ns !== 'object') return;
  for (const value of Object.values(ns as Record<string, unknown>)) {
    const m = value as { apiVersion?: unknown; kind?: unknown };
    if (typeof value === 'function' && typeof m.apiVersion === 'string' && typeof m.kind === 'string') models.set(`${m.apiVersion}/${m.kind}`, value as any);
    else if (value && typeof value === 'object') collect(value, depth + 1);
  }
})({ kubernetesModels, prometheusOperatorModels, kedaModels });

/** API versions no longer served by supported Kubernetes releases (1.25+). */
const removedApiVersions = new Set(['extensions/v1beta1', 'apps/v1beta1', 'apps/v1beta2', 'policy/v1beta1', 'batch/v1beta1', 'autoscaling/v2beta1', 'autoscaling/v2beta2', 'networking.k8s.io/v1beta1']);

const targets = ['base', 'overlays/small', 'overlays/production'];
/** The long-running services: every workspace under services/ but the one-shot set-up step. */
const services = readdirSync(join(repoRoot, 'services')).filter((d) => d !== 'setup' && existsSync(join(repoRoot, 'services', d, 'package.json'))).sort();
const kustomizeVersion = (() => {
  if (!which('kubectl')) return undefined;
  const v = run('kubectl', ['version', '--client']);
  return /Kustomize Version:\s*v?(\d+)\.(\d+)/.exec(v.stdout)?.slice(1, 3).map(Number);
})();

function kustomize(target: string): K8sObject[] {
  const r = run('kubectl', ['kustomize', join(deployDir, target)]);
  assert.equal(r.status, 0, `kubectl kustomize deploy/${target} failed:\n${r.stderr}`);
  return parseAllDocuments(r.stdout).map((d) => d.toJS() as K8sObject).filter(Boolean);
}

/** The bound of each shutdown step (Lifecycle's default timeout), in seconds. */
const shutdownStepSeconds = Number(/private readonly timeoutMs = ([\d_]+)/.exec(read('packages/platform/src/lifecycle.ts'))![1]!.replace(/_/g, '')) / 1000;

/** A variable that holds a secret when set directly (its <NAME>_FILE form holds only a path). */
const secretLike = (name: string) => /TOKEN|SECRET|PASSWORD|USER_INFO|KEY/i.test(name) && !name.endsWith('_FILE');

const matches = (selector: Record<string, string>, labels: Record<string, string> = {}) => Object.entries(selector).every(([k, v]) => labels[k] === v);

describe('Kubernetes manifests (kustomize)', { skip: which('kubectl') ? false : missing('kubectl', 'kubernetes-client') }, () => {
  it('kubectl has a kustomize with components (v4 or later)', () => {
    assert.ok(kustomizeVersion && kustomizeVersion[0]! >= 4, `kubectl's kustomize is ${kustomizeVersion?.join('.') ?? 'missing'}; components need kustomize v4+ (kubectl 1.21+)`);
  });

  for (const target of targets) {
    describe(`deploy/${target}`, () => {
      let objects: K8sObject[] = [];
      const all = (kind: string) => objects.filter((o) => o.kind === kind);
      const one = (kind: string, name: string) => {
        const found = objects.find((o) => o.kind === kind && o.metadata.name === name);
        assert.ok(found, `${kind} ${name} is rendered`);
        return found;
      };
      const common = () => one('ConfigMap', configMapName('switchyard-common')).data as Record<string, string>;
      const configMapName = (prefix: string) => {
        const cm = objects.find((o) => o.kind === 'ConfigMap' && (o.metadata.name === prefix || o.metadata.name.startsWith(`${prefix}-`)) && !o.metadata.name.slice(prefix.length + 1).includes('-'));
        assert.ok(cm, `ConfigMap ${prefix} is rendered`);
        return cm.metadata.name;
      };

      /** Every pod template: the Deployments, and the set-up Job as "setup". */
      const workloads = () => [
        ...all('Deployment').map((d) => ({ name: d.spec.template.metadata.labels['app.kubernetes.io/component'] as string, pod: d.spec.template.spec })),
        ...all('Job').map((j) => ({ name: j.spec.template.metadata.labels['app.kubernetes.io/component'] as string, pod: j.spec.template.spec })),
      ];
      /** A container's environment as the manifests give it: its ConfigMaps, then its literal env values. */
      const envOf = (c: any): Record<string, string | undefined> => {
        const env: Record<string, string | undefined> = {};
        for (const e of c.envFrom ?? []) if (e.configMapRef) Object.assign(env, one('ConfigMap', e.configMapRef.name).data);
        for (const e of c.env ?? []) if (e.value !== undefined) env[e.name] = e.value;
        return env;
      };
      /** Names of Secrets some pod cannot start without, sorted. */
      const requiredSecrets = () => {
        const names = new Set<string>();
        for (const { pod } of workloads()) {
          for (const v of pod.volumes ?? []) if (v.secret && !v.secret.optional) names.add(v.secret.secretName);
          for (const c of pod.containers) {
            for (const e of c.envFrom ?? []) if (e.secretRef && !e.secretRef.optional) names.add(e.secretRef.name);
            for (const e of c.env ?? []) if (e.valueFrom?.secretKeyRef && !e.valueFrom.secretKeyRef.optional) names.add(e.valueFrom.secretKeyRef.name);
          }
        }
        return [...names].sort();
      };
      /**
       * The Secret key a file path is mounted from: the container mounts a Secret volume read-only
       * at the file's directory, and the volume projects that key to the file's name.
       */
      const mountedSecretFile = (pod: any, c: any, path: string | undefined, what: string) => {
        assert.ok(typeof path === 'string' && path.startsWith('/'), `${what}: an absolute path (${path})`);
        const mount = (c.volumeMounts ?? []).find((m: any) => path.startsWith(`${m.mountPath.replace(/\/$/, '')}/`));
        assert.ok(mount, `${what}: ${path} is in a mounted volume`);
        assert.equal(mount.readOnly, true, `${what}: mounted read-only`);
        const volume = (pod.volumes ?? []).find((v: any) => v.name === mount.name);
        assert.ok(volume?.secret, `${what}: ${mount.name} is a Secret volume`);
        const file = path.slice(mount.mountPath.replace(/\/$/, '').length + 1);
        const item = (volume.secret.items ?? []).find((i: any) => i.path === file);
        assert.ok(item || !volume.secret.items, `${what}: the volume projects ${file}`);
        const mode = item?.mode ?? volume.secret.defaultMode ?? 0o644;
        assert.equal(mode & 0o007, 0, `${what}: no access for others (mode ${mode.toString(8)})`);
        assert.ok(pod.securityContext?.fsGroup !== undefined, `${what}: the pod has an fsGroup, so its non-root user can read the file`);
        return { secret: volume.secret.secretName as string, key: (item?.key ?? file) as string };
      };

      before(() => { objects = kustomize(target); });

      it('builds, and every object validates against the Kubernetes schemas', () => {
        assert.ok(objects.length > 10, `${objects.length} objects`);
        const problems: string[] = [];
        for (const o of objects) {
          const id = `${o.kind} ${o.metadata?.name}`;
          if (removedApiVersions.has(o.apiVersion)) { problems.push(`${id}: ${o.apiVersion} is no longer served`); continue; }
          const Model = models.get(`${o.apiVersion}/${o.kind}`);
          if (!Model) { problems.push(`${id}: no schema for ${o.apiVersion}/${o.kind}`); continue; }
          try { new Model(o).validate(); } catch (err) { problems.push(`${id}: ${(err as Error).message}`); }
        }
        assert.deepEqual(problems, []);
        const names = objects.map((o) => `${o.kind}/${o.metadata.name}`);
        assert.equal(new Set(names).size, names.length, 'no duplicate objects');
      });

      it('no Secret is rendered: secrets are created in the cluster, never kept in git', () => {
        assert.deepEqual(all('Secret').map((o) => o.metadata.name), []);
      });

      it('no ConfigMap or environment value holds a secret: only <NAME>_FILE paths', () => {
        const found: string[] = [];
        for (const cm of all('ConfigMap')) for (const key of Object.keys(cm.data ?? {})) if (secretLike(key)) found.push(`ConfigMap ${cm.metadata.name}: ${key}`);
        for (const w of workloads()) for (const c of w.pod.containers) for (const e of c.env ?? []) if (secretLike(e.name) && e.value !== undefined) found.push(`${w.name}: env ${e.name}`);
        assert.deepEqual(found, []);
      });

      it('the Secrets the pods need: none but control\'s without Kafka credentials; with them, the ones deploy/README.md names', () => {
        const needed = requiredSecrets();
        if (target !== 'overlays/production') {
          assert.deepEqual(needed, ['switchyard-control'], 'base and small run on a plaintext Kafka with no credentials: only control\'s admin token');
          for (const w of workloads()) {
            const env = envOf(w.pod.containers[0]);
            assert.ok(env.KAFKA_SECURITY_PROTOCOL === undefined || env.KAFKA_SECURITY_PROTOCOL === 'PLAINTEXT', `${w.name} connects in plaintext`);
          }
          return;
        }
        // The per-service Secrets are named in the README as switchyard-<service>-…
        const readme = read('deploy/README.md');
        const generic = (name: string) => name.replace(new RegExp(`^switchyard-(${['setup', ...services].join('|')})-`), 'switchyard-<service>-');
        for (const name of needed) assert.ok(readme.includes(generic(name)), `deploy/README.md says how to create the Secret ${generic(name)}`);
        assert.ok(needed.length > 4, needed.join(', '));
      });

      for (const name of services) {
        it(`${name}: Deployment with probes, resources, security context, configuration and a Secret reference`, () => {
          const d = one('Deployment', `switchyard-${name}`);
          const pod = d.spec.template.spec;
          assert.ok(matches(d.spec.selector.matchLabels, d.spec.template.metadata.labels), 'the selector matches the pod labels');
          assert.equal(pod.containers.length, 1);
          const c = pod.containers[0];
          assert.deepEqual(c.args, [name], 'the image runs the service named by its argument');
          const port = c.ports.find((p: any) => p.name === 'http');
          assert.ok(port, 'a port named http');
          assert.equal(c.livenessProbe.httpGet.path, '/healthz');
          assert.equal(c.livenessProbe.httpGet.port, 'http');
          assert.equal(c.readinessProbe.httpGet.path, '/readyz');
          assert.equal(c.readinessProbe.httpGet.port, 'http');
          for (const kind of ['requests', 'limits']) for (const r of ['cpu', 'memory']) assert.ok(c.resources?.[kind]?.[r], `resources.${kind}.${r}`);
          assert.equal(pod.securityContext.runAsNonRoot, true);
          assert.equal(pod.securityContext.seccompProfile.type, 'RuntimeDefault');
          assert.equal(c.securityContext.allowPrivilegeEscalation, false);
          assert.equal(c.securityContext.readOnlyRootFilesystem, true);
          assert.deepEqual(c.securityContext.capabilities.drop, ['ALL']);
          assert.equal(pod.automountServiceAccountToken, false);

          // Configuration: the shared ConfigMap, the service's own, and its Secret.
          const cms = c.envFrom.filter((e: any) => e.configMapRef).map((e: any) => e.configMapRef.name);
          assert.deepEqual(cms, [configMapName('switchyard-common'), configMapName(`switchyard-${name}`)]);
          for (const cm of cms) one('ConfigMap', cm);
          const secret = c.envFrom.find((e: any) => e.secretRef)?.secretRef;
          assert.equal(secret?.name, `switchyard-${name}`, 'a Secret reference');
          // control needs its Secret for the admin token, unless the token comes from a mounted file
          // (components/kafka-sasl-ssl); the others may have one.
          const tokenFromFile = (c.env ?? []).some((e: any) => e.name === 'SWITCHYARD_ADMIN_TOKEN_FILE');
          assert.equal(secret.optional ?? false, !(name === 'control' && !tokenFromFile), 'control needs its Secret (the admin token) unless the token is a file; the others may have one');
          const env = { ...common(), ...one('ConfigMap', configMapName(`switchyard-${name}`)).data };
          assert.equal(Number(env[`${name.toUpperCase()}_PORT`]), port.containerPort, 'the service listens on the container port');
          assert.equal(env.HOST, '0.0.0.0');

          // Graceful termination: delivery drains in-flight requests (up to 20 s, each at most
          // DELIVERY_TIMEOUT) and then commits; ingest waits for Kafka up to INGEST_ACK_TIMEOUT.
          const grace = pod.terminationGracePeriodSeconds;
          if (name === 'delivery') assert.ok(grace >= 20 + parseInt(env.DELIVERY_TIMEOUT!, 10) + 15, `delivery grace ${grace} s`);
          if (name === 'ingest') assert.ok(grace >= 5 + parseInt(env.INGEST_ACK_TIMEOUT!, 10) + 10, `ingest grace ${grace} s`);
          // fanout and audiences: the consumer's step (the batch in progress and its transaction)
          // may use the whole of one shutdown step's bound, then the HTTP server closes (≤ 5 s).
          if (name === 'fanout' || name === 'audiences') assert.ok(grace >= shutdownStepSeconds + 5 + 10, `${name} grace ${grace} s`);
          assert.ok(grace >= 30);

          // A rollout replaces one pod at a time and waits for the new one to be ready, as the
          // rolling-restart scenario does (test/faults-*.test.ts).
          assert.equal(d.spec.strategy?.type, 'RollingUpdate');
          assert.equal(d.spec.strategy.rollingUpdate?.maxUnavailable, 0, 'maxUnavailable 0: an old pod stops only once its replacement is ready');
          assert.equal(d.spec.strategy.rollingUpdate?.maxSurge, 1, 'maxSurge 1: one new pod at a time');
          assert.ok(c.readinessProbe.periodSeconds <= 10, 'readiness is noticed within seconds');

          // A Service and a disruption budget over the same pods.
          const svc = one('Service', `switchyard-${name}`);
          assert.ok(matches(svc.spec.selector, d.spec.template.metadata.labels));
          assert.equal(svc.spec.ports[0].targetPort, 'http');
          const pdb = all('PodDisruptionBudget').find((p) => matches(p.spec.selector.matchLabels, d.spec.template.metadata.labels));
          assert.ok(pdb, 'a PodDisruptionBudget');
          assert.ok(pdb.spec.maxUnavailable !== undefined || pdb.spec.minAvailable !== undefined);
        });
      }

      it('the set-up Job runs the image with the shared configuration', () => {
        const job = one('Job', 'switchyard-setup');
        const c = job.spec.template.spec.containers[0];
        assert.deepEqual(c.args, ['setup']);
        assert.ok(c.envFrom.some((e: any) => e.configMapRef?.name === configMapName('switchyard-common')));
        const images = new Set(objects.flatMap((o) => (o.spec?.template?.spec?.containers ?? []).map((x: any) => x.image)));
        assert.equal(images.size, 1, `one image for every service: ${[...images].join(', ')}`);
      });

      it('ingest scales on CPU; fanout and delivery on consumer lag (KEDA) where the overlay has it', () => {
        const hpa = all('HorizontalPodAutoscaler').find((h) => h.spec.scaleTargetRef.name === 'switchyard-ingest');
        assert.ok(hpa, 'an HPA for ingest');
        assert.ok(hpa.spec.metrics.some((m: any) => m.type === 'Resource' && m.resource.name === 'cpu'));
        const scaled = all('ScaledObject');
        const env = common();
        const partitions = Number(env.SWITCHYARD_PARTITIONS);
        const expected = { fanout: { group: 'fanout', topic: 'ingest' }, delivery: { group: 'delivery', topic: 'delivery' } };
        for (const so of scaled) {
          const svc = so.spec.scaleTargetRef.name.replace(/^switchyard-/, '') as keyof typeof expected;
          assert.ok(expected[svc], `ScaledObject ${so.metadata.name} targets a consumer`);
          const trigger = so.spec.triggers.find((t: any) => t.type === 'kafka');
          assert.ok(trigger, 'a kafka trigger');
          assert.equal(trigger.metadata.bootstrapServers, env.KAFKA_BROKERS, 'KEDA reads the brokers the services use');
          assert.equal(trigger.metadata.consumerGroup, `${env.SWITCHYARD_TOPIC_PREFIX}${expected[svc].group}`, 'the consumer group follows SWITCHYARD_TOPIC_PREFIX');
          assert.equal(trigger.metadata.topic, `${env.SWITCHYARD_TOPIC_PREFIX}${expected[svc].topic}`, 'the topic follows SWITCHYARD_TOPIC_PREFIX');
          assert.ok(so.spec.maxReplicaCount <= partitions, `maxReplicaCount ${so.spec.maxReplicaCount} ≤ ${partitions} partitions`);
        }
        if (target === 'overlays/production') assert.deepEqual(scaled.map((s) => s.spec.scaleTargetRef.name).sort(), ['switchyard-delivery', 'switchyard-fanout']);
        // An autoscaled Deployment leaves replicas to its autoscaler (re-applying must not reset it).
        const scaledNames = [...all('HorizontalPodAutoscaler').map((h) => h.spec.scaleTargetRef.name), ...scaled.map((s) => s.spec.scaleTargetRef.name)];
        for (const n of scaledNames) assert.equal(one('Deployment', n).spec.replicas, undefined, `${n} has no replicas field`);
      });

      it('no transactional id is configured and no StatefulSet is needed: fanout and audiences derive one per input partition', () => {
        assert.doesNotMatch(JSON.stringify(objects), /TRANSACTIONAL_ID/);
        assert.deepEqual(all('StatefulSet').map((o) => o.metadata.name), []);
      });

      if (target === 'overlays/production') {
        /** The fewest replicas a service runs: its autoscaler's minimum, or the Deployment's replicas. */
        const minReplicas = (name: string): number => {
          const deployment = `switchyard-${name}`;
          const targets = (o: K8sObject) => o.spec.scaleTargetRef.kind === 'Deployment' && o.spec.scaleTargetRef.name === deployment;
          const hpa = all('HorizontalPodAutoscaler').find(targets);
          const scaled = all('ScaledObject').find(targets);
          if (hpa) return hpa.spec.minReplicas ?? 1;
          if (scaled) return scaled.spec.minReplicaCount ?? 0;
          return one('Deployment', deployment).spec.replicas ?? 1;
        };

        it('production: at least two replicas of every service, each behind a disruption budget of one pod', () => {
          for (const name of services) {
            const replicas = minReplicas(name);
            assert.ok(replicas >= 2, `${name} runs at least 2 replicas (${replicas})`);
            const labels = one('Deployment', `switchyard-${name}`).spec.template.metadata.labels;
            const pdbs = all('PodDisruptionBudget').filter((p) => matches(p.spec.selector.matchLabels, labels));
            assert.equal(pdbs.length, 1, `one PodDisruptionBudget selects ${name}'s pods`);
            assert.equal(pdbs[0]!.spec.maxUnavailable, 1, `${name}: a drain takes one pod at a time`);
            assert.equal(pdbs[0]!.spec.minAvailable, undefined);
            const others = services.filter((o) => o !== name && matches(pdbs[0]!.spec.selector.matchLabels, one('Deployment', `switchyard-${o}`).spec.template.metadata.labels));
            assert.deepEqual(others, [], `${name}'s PodDisruptionBudget selects no other service`);
          }
          // fanout and delivery: KEDA never runs more consumers than the topics have partitions.
          const partitions = Number(common().SWITCHYARD_PARTITIONS);
          for (const name of ['fanout', 'delivery']) {
            const scaled = all('ScaledObject').find((o) => o.spec.scaleTargetRef.name === `switchyard-${name}`);
            assert.ok(scaled && scaled.spec.minReplicaCount <= scaled.spec.maxReplicaCount && scaled.spec.maxReplicaCount <= partitions, `${name}: ${scaled?.spec.minReplicaCount}-${scaled?.spec.maxReplicaCount} replicas, ${partitions} partitions`);
          }
        });

        it('production: every service spreads over zones and nodes', () => {
          for (const name of services) {
            const pod = one('Deployment', `switchyard-${name}`).spec.template;
            const spread = (pod.spec.topologySpreadConstraints ?? []) as Array<{ topologyKey: string; maxSkew: number; whenUnsatisfiable: string; labelSelector: { matchLabels: Record<string, string> } }>;
            for (const key of ['topology.kubernetes.io/zone', 'kubernetes.io/hostname']) {
              const c = spread.find((x) => x.topologyKey === key);
              assert.ok(c, `${name} spreads over ${key}`);
              assert.equal(c.maxSkew, 1);
              assert.ok(['ScheduleAnyway', 'DoNotSchedule'].includes(c.whenUnsatisfiable));
              assert.ok(matches(c.labelSelector.matchLabels, pod.metadata.labels), `${name}'s ${key} spread counts its own pods`);
              assert.equal(c.labelSelector.matchLabels['app.kubernetes.io/component'], name, `${name}'s ${key} spread counts only its own pods`);
            }
          }
        });

        it('production: every workload connects with SASL_SSL and SCRAM as its own user, its password and the CA files of mounted Secrets', () => {
          const passwords = new Map<string, string>();
          const found = workloads().map((w) => w.name).sort();
          assert.deepEqual(found, ['setup', ...services].sort(), 'every Deployment and the set-up Job');
          for (const { name, pod } of workloads()) {
            const c = pod.containers[0];
            const env = envOf(c);
            assert.equal(env.KAFKA_SECURITY_PROTOCOL, 'SASL_SSL', `${name}: TLS and SASL`);
            assert.match(env.KAFKA_SASL_MECHANISM ?? '', /^SCRAM-SHA-(256|512)$/, `${name}: a SCRAM mechanism`);
            assert.equal(env.KAFKA_SASL_USERNAME, `switchyard-${name}`, `${name}: its own user (the ACL table's principal)`);
            for (const broker of (env.KAFKA_BROKERS ?? '').split(',')) assert.doesNotMatch(broker, /:9092$/, `${name}: ${broker} is the TLS listener (Strimzi: 9093), not the plaintext 9092`);
            for (const n of ['KAFKA_SASL_PASSWORD', 'KAFKA_SSL_KEY_PASSWORD', 'SCHEMA_REGISTRY_BASIC_AUTH_USER_INFO', 'SWITCHYARD_ADMIN_TOKEN']) {
              assert.equal(env[n], undefined, `${name}: ${n} is not in the manifests (${n}_FILE is)`);
              assert.ok(!(c.env ?? []).some((e: any) => e.name === n), `${name}: ${n} is not set from a Secret into the environment either`);
            }
            const password = mountedSecretFile(pod, c, env.KAFKA_SASL_PASSWORD_FILE, `${name} KAFKA_SASL_PASSWORD_FILE`);
            assert.ok(![...passwords.values()].includes(password.secret), `${name}: a password Secret of its own (${password.secret})`);
            passwords.set(name, password.secret);
            mountedSecretFile(pod, c, env.KAFKA_SSL_CA_FILE, `${name} KAFKA_SSL_CA_FILE`);
          }
        });

        it('production: the registry over https with Basic auth and its CA, and the admin token, from mounted Secrets', () => {
          for (const { name, pod } of workloads()) {
            const c = pod.containers[0];
            const env = envOf(c);
            assert.match(env.SCHEMA_REGISTRY_URL ?? '', /^https:\/\//, `${name}: the registry over https`);
            mountedSecretFile(pod, c, env.SCHEMA_REGISTRY_BASIC_AUTH_USER_INFO_FILE, `${name} SCHEMA_REGISTRY_BASIC_AUTH_USER_INFO_FILE`);
            mountedSecretFile(pod, c, env.SCHEMA_REGISTRY_SSL_CA_FILE, `${name} SCHEMA_REGISTRY_SSL_CA_FILE`);
            if (name === 'control') mountedSecretFile(pod, c, env.SWITCHYARD_ADMIN_TOKEN_FILE, 'control SWITCHYARD_ADMIN_TOKEN_FILE');
            else assert.equal(env.SWITCHYARD_ADMIN_TOKEN_FILE, undefined, `${name} does not get the admin token`);
          }
        });

        it('production: KEDA reads the lag over TLS and SCRAM as the service it scales', () => {
          for (const so of all('ScaledObject')) {
            const deployment = one('Deployment', so.spec.scaleTargetRef.name);
            const c = deployment.spec.template.spec.containers[0];
            const trigger = so.spec.triggers.find((t: any) => t.type === 'kafka');
            assert.equal(trigger.metadata.sasl, 'scram_sha512', `${so.metadata.name}: SCRAM-SHA-512, as the services`);
            assert.equal(envOf(c).KAFKA_SASL_MECHANISM, 'SCRAM-SHA-512');
            assert.equal(trigger.metadata.tls, 'enable');
            const auth = one('TriggerAuthentication', trigger.authenticationRef?.name);
            const user = auth.spec.env.find((e: any) => e.parameter === 'username');
            assert.equal(user.name, 'KAFKA_SASL_USERNAME');
            assert.equal(user.containerName, c.name, 'the user of the scaled Deployment');
            const ref = (p: string) => auth.spec.secretTargetRef.find((r: any) => r.parameter === p);
            const password = mountedSecretFile(deployment.spec.template.spec, c, envOf(c).KAFKA_SASL_PASSWORD_FILE, so.metadata.name);
            assert.deepEqual({ name: ref('password')?.name, key: ref('password')?.key }, { name: password.secret, key: password.key }, 'the password Secret the pods mount');
            const ca = mountedSecretFile(deployment.spec.template.spec, c, envOf(c).KAFKA_SSL_CA_FILE, so.metadata.name);
            assert.deepEqual({ name: ref('ca')?.name, key: ref('ca')?.key }, { name: ca.secret, key: ca.key }, 'the CA the pods mount');
          }
        });

        it('production: the set-up Job creates the topics with 3 replicas, and so min.insync.replicas=2', () => {
          const c = one('Job', 'switchyard-setup').spec.template.spec.containers[0];
          const env: Record<string, string> = {};
          for (const e of c.envFrom ?? []) if (e.configMapRef) Object.assign(env, one('ConfigMap', e.configMapRef.name).data);
          for (const e of c.env ?? []) env[e.name] = e.value;
          assert.equal(env.SWITCHYARD_REPLICATION_FACTOR, '3');
          // What setup adds to every topic with that many replicas (packages/platform/src/kafka/topics.ts).
          assert.deepEqual(replicationConfigs(Number(env.SWITCHYARD_REPLICATION_FACTOR)), { 'min.insync.replicas': '2' });
        });
      }

      it('Prometheus Operator resources, where the overlay has them, scrape every service and carry the alert rules', () => {
        for (const pm of all('PodMonitor')) {
          for (const name of services) assert.ok(matches(pm.spec.selector.matchLabels, one('Deployment', `switchyard-${name}`).spec.template.metadata.labels), `the PodMonitor selects ${name}`);
          assert.equal(pm.spec.podMetricsEndpoints[0].port, 'http');
          assert.equal(pm.spec.podMetricsEndpoints[0].path, '/metrics');
        }
        for (const rule of all('PrometheusRule')) {
          const source = parseYaml(read('deploy/prometheus/switchyard-alerts.yml')) as { groups: unknown };
          assert.deepEqual(rule.spec.groups, source.groups, 'the PrometheusRule differs from deploy/prometheus/switchyard-alerts.yml: run node deploy/prometheus/sync-prometheusrule.mjs');
        }
        if (target === 'overlays/production') { one('PodMonitor', 'switchyard'); one('PrometheusRule', 'switchyard'); }
      });
    });
  }

  it('the base ConfigMaps name only variables the services read, and every setting a user tunes', () => {
    // A service's variables: the keys of its zod schema in main.ts, with the shared groups expanded.
    const keysOf = (text: string) => [...text.matchAll(/^\s{2}([A-Z][A-Z0-9_]+):/gm)].map((m) => m[1]!);
    const config = read('packages/platform/src/config.ts');
    // A group's keys, with the groups it spreads (`...kafkaSecurityEnv`) expanded.
    const group = (name: string): string[] => {
      const body = new RegExp(`export const ${name} = \\{([\\s\\S]*?)\\n\\};`).exec(config)![1]!;
      return [...keysOf(body), ...[...body.matchAll(/^\s{2}\.\.\.(\w+),/gm)].flatMap((m) => group(m[1]!))];
    };
    const reads = (service: string) => {
      const main = read(`services/${service}/src/main.ts`);
      return new Set([...keysOf(main), ...['commonEnv', 'topicEnv', 'retryEnv'].flatMap((name) => (main.includes(`...${name}`) ? group(name) : []))]);
    };
    const base = kustomize('base');
    const data = (prefix: string) => base.find((o) => o.kind === 'ConfigMap' && o.metadata.name.startsWith(`${prefix}-`) && !o.metadata.name.slice(prefix.length + 1).includes('-'))?.data as Record<string, string>;
    const common = Object.keys(data('switchyard-common'));
    for (const key of common) assert.ok(['setup', ...services].some((s) => reads(s).has(key)), `switchyard-common: no service reads ${key}`);
    // Secrets and cosmetic settings are left to the user's overlay. Transactional ids are never
    // configured: fanout and audiences derive one per input partition (a service that still reads
    // a *_TRANSACTIONAL_ID variable is not asked to have it in a ConfigMap).
    // Kafka security and registry credentials belong to a secured cluster's overlay
    // (components/kafka-sasl-ssl): the base connects in plaintext.
    const notInConfigMaps = new Set(['SWITCHYARD_ADMIN_TOKEN', 'SWITCHYARD_SEED_FILE', 'DELIVERY_USER_AGENT', ...group('kafkaSecurityEnv'), ...group('registryEnv').filter((key) => key !== 'SCHEMA_REGISTRY_URL')]);
    for (const name of services) {
      const own = Object.keys(data(`switchyard-${name}`));
      for (const key of own) assert.ok(reads(name).has(key), `switchyard-${name}: ${name} does not read ${key}`);
      for (const key of reads(name)) {
        if (!notInConfigMaps.has(key) && !key.endsWith('_TRANSACTIONAL_ID')) assert.ok(own.includes(key) || common.includes(key), `${name} reads ${key}, which is in neither switchyard-common nor switchyard-${name} (deploy/base/kustomization.yaml)`);
      }
    }
  });

  it('the Prometheus Operator resources and KEDA are components the base does not need', () => {
    const base = kustomize('base');
    assert.deepEqual(base.filter((o) => /monitoring\.coreos\.com|keda\.sh/.test(o.apiVersion)).map((o) => o.kind), []);
    for (const c of ['prometheus-operator', 'keda-autoscaling', 'grafana-dashboard']) {
      assert.match(read(`deploy/components/${c}/kustomization.yaml`), /kind: Component/);
    }
  });
});

// ---------------------------------------------------------------------------------------------
// Alert rules and dashboard

interface RuleFile { groups: Array<{ name: string; rules: Array<{ alert?: string; record?: string; expr: string; annotations?: Record<string, string> }> }> }
const rules = parseYaml(read('deploy/prometheus/switchyard-alerts.yml')) as RuleFile;
const dashboard = JSON.parse(read('deploy/components/grafana-dashboard/switchyard.json')) as {
  uid: string; panels: Array<{ type: string; title: string; datasource?: { uid: string }; targets?: Array<{ expr: string }> }>;
  templating: { list: Array<{ name: string; type: string; query?: string | { query: string } }> };
};

describe('alert rules (promtool)', { skip: which('promtool') ? false : missing('promtool', 'prometheus') }, () => {
  it('promtool check rules accepts them', () => {
    const r = run('promtool', ['check', 'rules', 'deploy/prometheus/switchyard-alerts.yml']);
    assert.equal(r.status, 0, r.stdout + r.stderr);
  });

  it('promtool test rules: each alert fires when it should, and not otherwise', () => {
    const r = run('promtool', ['test', 'rules', 'switchyard-alerts.test.yml'], { cwd: join(deployDir, 'prometheus') });
    assert.equal(r.status, 0, r.stdout + r.stderr);
  });
});

describe('alert runbooks and the dashboard', () => {
  const alerts = [...new Set(rules.groups.flatMap((g) => g.rules.flatMap((r) => (r.alert ? [r.alert] : []))))];

  it('covers the alerts the issue asks for, and watches every service', () => {
    for (const a of ['SwitchyardDeadLettersGrowing', 'SwitchyardConsumerLagGrowing', 'SwitchyardDeliveryErrorRatioHigh', 'SwitchyardEndToEndLatencyHigh', 'SwitchyardServiceDown', 'SwitchyardAttemptRecordsDropped']) assert.ok(alerts.includes(a), a);
    const down = rules.groups.flatMap((g) => g.rules).find((r) => r.alert === 'SwitchyardServiceDown')!.expr;
    for (const name of services) assert.ok(down.includes(`absent(up{job="switchyard-${name}"})`) && new RegExp(`\\b${name}\\b`).test(down.split('\n')[0]!), `SwitchyardServiceDown watches ${name}`);
  });

  it('every alert has a runbook paragraph in deploy/README.md, and its runbook_url points at it', () => {
    const readme = read('deploy/README.md');
    const headings = new Set([...readme.matchAll(/^#{2,4} (.+)$/gm)].map((m) => m[1]!.trim().toLowerCase().replace(/[^\w\- ]/g, '').replace(/ /g, '-')));
    for (const rule of rules.groups.flatMap((g) => g.rules)) {
      if (!rule.alert) continue;
      assert.ok(headings.has(rule.alert.toLowerCase()), `deploy/README.md has a "### ${rule.alert}" runbook`);
      assert.equal(rule.annotations?.runbook_url, `deploy/README.md#${rule.alert.toLowerCase()}`);
      assert.ok(rule.annotations?.summary && rule.annotations.description, `${rule.alert} has a summary and a description`);
    }
  });

  it('the dashboard has a row per hop, is templated by destination, and uses its data source variable', () => {
    assert.equal(dashboard.uid, 'switchyard');
    const rows = dashboard.panels.filter((p) => p.type === 'row').map((p) => p.title);
    for (const hop of ['Ingest', 'Fan-out', 'Delivery', 'End to end', 'Trace and usage', 'Control']) assert.ok(rows.some((r) => r.startsWith(hop)), `a ${hop} row`);
    const vars = dashboard.templating.list.map((v) => v.name);
    assert.ok(vars.includes('destination') && vars.includes('source') && vars.includes('datasource'));
    for (const p of dashboard.panels.filter((x) => x.type !== 'row')) {
      assert.equal(p.datasource?.uid, '${datasource}', `panel "${p.title}" uses the data source variable`);
      assert.ok(p.targets?.length, `panel "${p.title}" has a query`);
    }
    const titles = dashboard.panels.map((p) => p.title.toLowerCase());
    for (const t of ['attempts by status', 'request latency', 'in flight', 'retries per tier', 'dead letters by reason', 'end-to-end latency', 'circuit breakers', 'consumer lag (ingest topic)', 'filtered and invalid', 'errors', 'usage by source', 'usage per day', 'attempt records', 'trace index', 'admin writes', 'auth failures', 'deletion requests and dead-letter replays']) {
      assert.ok(titles.some((x) => x.includes(t)), `a "${t}" panel`);
    }
  });
});

/**
 * Metric names a PromQL expression reads. Strings, label matchers, ranges and grouping clauses are
 * removed first; what remains that is not a function, keyword or number is a metric name.
 */
export function metricNames(expr: string): string[] {
  const keywords = new Set(['by', 'without', 'on', 'ignoring', 'group_left', 'group_right', 'bool', 'and', 'or', 'unless', 'offset', 'inf', 'nan', 'atan2']);
  const text = expr
    .replace(/\$\{?\w+(?::\w+)?\}?/g, '1m') // Grafana variables ($__rate_interval, ${var})
    .replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`/g, '""')
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(/\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ');
  const names = new Set<string>();
  for (const m of text.matchAll(/(?<![\w.])[A-Za-z_:][\w:]*/g)) {
    const after = text.slice(m.index! + m[0].length);
    if (/^\s*\(/.test(after) || keywords.has(m[0].toLowerCase())) continue;
    names.add(m[0]);
  }
  return [...names];
}

/** Every metric name the dashboard (panels and template variables) and the alert rules read. */
function queriedMetrics(): Map<string, string[]> {
  const where = new Map<string, string[]>();
  const add = (expr: string, origin: string) => { for (const n of metricNames(expr)) where.set(n, [...(where.get(n) ?? []), origin]); };
  for (const p of dashboard.panels) for (const t of p.targets ?? []) add(t.expr, `dashboard panel "${p.title}"`);
  for (const v of dashboard.templating.list) {
    if (v.type !== 'query') continue;
    const q = typeof v.query === 'string' ? v.query : v.query?.query ?? '';
    const lv = /^label_values\((.*),\s*\w+\)$/.exec(q.trim());
    add(lv ? lv[1]! : q, `dashboard variable ${v.name}`);
  }
  for (const g of rules.groups) for (const r of g.rules) add(r.expr, `alert ${r.alert ?? r.record}`);
  return where;
}

describe('PromQL metric name extraction', () => {
  it('finds metric names, not functions, labels, keywords or variables', () => {
    assert.deepEqual(metricNames('histogram_quantile(0.99, sum by (le) (rate(x_bucket{destination=~"$destination"}[$__rate_interval])))'), ['x_bucket']);
    assert.deepEqual(metricNames('sum(rate(a_total[5m])) by (job) / on(job) group_left(foo) b offset 5m > 1e3 and bool c'), ['a_total', 'b', 'c']);
    assert.deepEqual(metricNames('absent(up{job="x"}) or vector(0)'), ['up']);
  });
});

describe('every metric the dashboard and the alert rules query is exported by a running service', () => {
  const prefix = uniquePrefix('deploy');
  const env = pipelineEnv(prefix, { SWITCHYARD_ADMIN_TOKEN: 'deploy-test-admin-token', LOG_LEVEL: 'warn' });
  const running: RunningService[] = [];
  const exported = new Map<string, string>();

  before(async () => {
    await setupTopics(env);
    const started = await Promise.allSettled(services.map((name) => startService(name, env)));
    for (const s of started) if (s.status === 'fulfilled') running.push(s.value);
    for (const s of started) if (s.status === 'rejected') throw s.reason;
    for (const svc of running) {
      const text = await (await fetch(`${svc.url}/metrics`)).text();
      for (const m of text.matchAll(/^# TYPE (\S+) (\S+)$/gm)) {
        const [, name, type] = m as unknown as [string, string, string];
        exported.set(name, type);
        if (type === 'histogram') for (const s of ['_bucket', '_sum', '_count']) exported.set(name + s, type);
        if (type === 'summary') for (const s of ['_sum', '_count']) exported.set(name + s, type);
      }
    }
  });
  after(async () => { await Promise.all(running.map((s) => s.stop())); });

  it('the services export their hop metrics', () => {
    for (const n of ['ingest_http_requests_total', 'fanout_consumer_lag', 'delivery_attempts_total', 'delivery_end_to_end_seconds_bucket', 'control_admin_writes_total', 'process_cpu_seconds_total']) assert.ok(exported.has(n), n);
  });

  it('every queried name is exported (up is Prometheus\' own)', () => {
    const queried = queriedMetrics();
    assert.ok(queried.size >= 25, `${queried.size} metric names found in the queries`);
    const prometheusOwn = new Set(['up']);
    const unknown = [...queried].filter(([name]) => !exported.has(name) && !prometheusOwn.has(name)).map(([name, origins]) => `${name} (${[...new Set(origins)].join('; ')})`);
    assert.deepEqual(unknown, [], 'queried but not exported by any service');
  });
});

// ---------------------------------------------------------------------------------------------
// docker-compose

describe('transactional ids', () => {
  it('no deployment file sets a transactional id: fanout and audiences derive one per input partition', () => {
    // A fixed id per pod (or per container) would not fence the previous owner of a partition after
    // a rebalance (docs/decisions/0011-transactional-id-per-partition.md); the services name them
    // <prefix>fanout-p<N> / <prefix>audiences-p<N>.
    const files = ['docker-compose.yml', 'Dockerfile', ...filesUnder('deploy').filter((f) => /\.(ya?ml|json|mjs|md)$/.test(f))];
    const found = files.filter((f) => /TRANSACTIONAL_ID/.test(read(f)));
    assert.deepEqual(found, []);
  });
});

describe('docker-compose.yml', { skip: which('docker-compose') ? false : missing('docker-compose', 'docker-compose') }, () => {
  let config: { services: Record<string, any> };

  before(() => {
    const r = run('docker-compose', ['-f', 'docker-compose.yml', 'config']);
    assert.equal(r.status, 0, `docker-compose config refused docker-compose.yml:\n${r.stderr}`);
    config = parseYaml(r.stdout) as typeof config;
  });

  it('docker-compose config accepts it, with every part of the stack', () => {
    for (const s of ['kafka', 'registry', 'registry-config', 'setup', ...services, 'receiver', 'prometheus', 'grafana']) assert.ok(config.services[s], s);
    assert.match(config.services.kafka.image, /^apache\/kafka:/);
    assert.match(config.services.registry.image, /^apicurio\/apicurio-registry:/);
  });

  it('the services use the image built from the Dockerfile, with health checks and start-up order', () => {
    assert.equal(config.services.setup.depends_on.kafka.condition, 'service_healthy');
    assert.equal(config.services.setup.depends_on['registry-config'].condition, 'service_completed_successfully');
    for (const name of services) {
      const s = config.services[name];
      assert.deepEqual(s.command, [name]);
      assert.ok(s.build, `${name} builds the image`);
      assert.equal(s.depends_on.setup.condition, 'service_completed_successfully');
      assert.ok(s.healthcheck?.test, `${name} has a health check`);
      assert.equal(s.environment.HOST, '0.0.0.0');
      const port = s.environment[`${name.toUpperCase()}_PORT`];
      assert.ok(s.healthcheck.test.join(' ').includes(`:${port}/readyz`), `${name}'s health check asks /readyz on its port`);
    }
    for (const name of ['kafka', 'registry', 'prometheus', 'grafana', 'receiver']) assert.ok(config.services[name].healthcheck?.test, `${name} has a health check`);
  });

  it('with deploy/compose/kafka-sasl-ssl.yml: every service connects with SASL_SSL and SCRAM as its own user, every credential a Compose secret file', () => {
    // The addresses as a user exports them (the test run's own, plaintext ones are in the environment).
    const env = { ...process.env, KAFKA_BROKERS: 'kafka.example.com:9093', SCHEMA_REGISTRY_URL: 'https://registry.example.com/apis/ccompat/v7' };
    const r = run('docker-compose', ['-f', 'docker-compose.yml', '-f', 'deploy/compose/kafka-sasl-ssl.yml', 'config'], { env });
    assert.equal(r.status, 0, `docker-compose config refused docker-compose.yml with deploy/compose/kafka-sasl-ssl.yml:\n${r.stderr}`);
    const secure = parseYaml(r.stdout) as { services: Record<string, any>; secrets: Record<string, { file?: string }> };
    const passwords = new Set<string>();
    for (const name of ['setup', ...services]) {
      const s = secure.services[name];
      const env = s.environment as Record<string, string>;
      assert.equal(env.KAFKA_SECURITY_PROTOCOL, 'SASL_SSL', name);
      assert.match(env.KAFKA_SASL_MECHANISM ?? '', /^SCRAM-SHA-(256|512)$/, name);
      assert.equal(env.KAFKA_SASL_USERNAME, `switchyard-${name}`, `${name}: its own user`);
      assert.match(env.SCHEMA_REGISTRY_URL ?? '', /^https:\/\//, `${name}: the registry over https`);
      const mounted = new Map<string, string>((s.secrets ?? []).map((x: { source: string; target?: string }) => [x.target?.startsWith('/') ? x.target : `/run/secrets/${x.target ?? x.source}`, x.source]));
      const files = ['KAFKA_SASL_PASSWORD_FILE', 'KAFKA_SSL_CA_FILE', 'SCHEMA_REGISTRY_BASIC_AUTH_USER_INFO_FILE', 'SCHEMA_REGISTRY_SSL_CA_FILE', ...(name === 'control' ? ['SWITCHYARD_ADMIN_TOKEN_FILE'] : [])];
      for (const v of files) {
        const source = mounted.get(env[v] ?? '');
        assert.ok(source, `${name}: ${v}=${env[v]} is a secret the service mounts`);
        assert.ok(secure.secrets[source]?.file, `${name}: the secret ${source} is a file`);
      }
      const password = mounted.get(env.KAFKA_SASL_PASSWORD_FILE ?? '')!;
      assert.ok(!passwords.has(password), `${name}: a password secret of its own (${password})`);
      passwords.add(password);
      for (const [k, v] of Object.entries(env)) if (secretLike(k) && !/^DEMO_/.test(k)) assert.equal(v, '', `${name}: ${k} is not set (its _FILE is)`);
    }
  });

  it('Prometheus scrapes every service under the job names the rules use; the mounted files exist', () => {
    const prom = parseYaml(read('deploy/compose/prometheus.yml')) as { scrape_configs: Array<{ job_name: string; static_configs: Array<{ targets: string[] }> }> };
    for (const name of services) {
      const job = prom.scrape_configs.find((j) => j.job_name === `switchyard-${name}`);
      assert.ok(job, `job switchyard-${name}`);
      assert.deepEqual(job.static_configs[0]!.targets, [`${name}:${config.services[name].environment[`${name.toUpperCase()}_PORT`]}`]);
    }
    for (const s of Object.values(config.services)) {
      for (const v of s.volumes ?? []) {
        const source = typeof v === 'string' ? v.split(':')[0] : v.source;
        if (source?.startsWith('/')) assert.ok(existsSync(source), `${source} exists`);
      }
    }
  });
});

// ---------------------------------------------------------------------------------------------
// The container image

interface Instruction { stage: string; op: string; args: string }

function dockerfile(): Instruction[] {
  const lines = read('Dockerfile').replace(/\\\n/g, ' ').split('\n').map((l) => l.trim()).filter((l) => l && !l.startsWith('#'));
  let stage = '';
  return lines.map((l) => {
    const [, op, args] = /^(\w+)\s+(.*)$/.exec(l) ?? [];
    if (op?.toUpperCase() === 'FROM') stage = /\bAS\s+(\S+)/i.exec(args!)?.[1] ?? '';
    return { stage, op: op!.toUpperCase(), args: args! };
  });
}

/** .dockerignore semantics: the last matching pattern wins; a pattern also matches everything below. */
function dockerIgnored(path: string): boolean {
  const patterns = read('.dockerignore').split('\n').map((l) => l.trim()).filter((l) => l && !l.startsWith('#'));
  const toRegex = (p: string) => new RegExp(`^${p.replace(/^\//, '').replace(/\/$/, '').split('**').map((part) => part.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '[^/]*').replace(/\?/g, '[^/]')).join('.*')}(/.*)?$`);
  let ignored = false;
  for (const raw of patterns) {
    const negated = raw.startsWith('!');
    if (toRegex(negated ? raw.slice(1) : raw).test(path)) ignored = !negated;
  }
  return ignored;
}

function filesUnder(dir: string): string[] {
  const abs = join(repoRoot, dir);
  if (!statSync(abs).isDirectory()) return [dir];
  return readdirSync(abs, { withFileTypes: true }).flatMap((e) => filesUnder(join(dir, e.name)));
}

function workspaces(): string[] {
  const pkg = JSON.parse(read('package.json')) as { workspaces: string[] };
  return pkg.workspaces.flatMap((glob) => {
    const parent = glob.replace(/\/\*$/, '');
    return readdirSync(join(repoRoot, parent)).map((d) => `${parent}/${d}`).filter((d) => existsSync(join(repoRoot, d, 'package.json')));
  });
}

/** Spawns a command with its output kept, in the shape waitForHttp-like helpers need. */
function spawnKept(args: string[], env: NodeJS.ProcessEnv): { child: ChildProcess; output: string[]; exited: Promise<number | string> } {
  const child = spawn(process.execPath, args, { cwd: repoRoot, env: { PATH: process.env.PATH, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  const output: string[] = [];
  const onData = (b: Buffer) => output.push(...b.toString('utf8').split('\n').filter(Boolean));
  child.stdout!.on('data', onData);
  child.stderr!.on('data', onData);
  const exited = new Promise<number | string>((resolve) => child.once('exit', (code, sig) => resolve(code ?? sig ?? 'unknown')));
  return { child, output, exited };
}

describe('the container image (Dockerfile)', () => {
  const steps = dockerfile();

  it('is multi-stage, runs as a non-root user and starts the service named by argument or environment', () => {
    const stages = steps.filter((s) => s.op === 'FROM').map((s) => s.stage);
    assert.deepEqual(stages, ['build', 'deps', 'runtime']);
    const runtime = steps.filter((s) => s.stage === 'runtime');
    const user = runtime.filter((s) => s.op === 'USER').at(-1)?.args ?? '';
    assert.match(user, /^[1-9]\d*(:\d+)?$/, 'a numeric non-root user (so Kubernetes can check runAsNonRoot)');
    assert.deepEqual(JSON.parse(runtime.find((s) => s.op === 'ENTRYPOINT')!.args), ['node', '/app/deploy/docker/start.mjs']);
    assert.match(steps.find((s) => s.stage === 'deps' && s.op === 'RUN')!.args, /npm ci --omit=dev/, 'production dependencies only');
    assert.ok(!runtime.some((s) => s.op === 'COPY' && / \/app\/node_modules/.test(s.args) && !s.args.includes('--from=deps')), 'node_modules comes from the production-only stage');
  });

  it('every file it copies from the checkout exists and is not excluded by .dockerignore', () => {
    const copies = steps.filter((s) => s.op === 'COPY' && !s.args.startsWith('--from'));
    assert.ok(copies.length > 5);
    for (const { args } of copies) {
      const parts = args.split(/\s+/).filter((p) => !p.startsWith('--'));
      for (const source of parts.slice(0, -1)) {
        const path = source.replace(/\/$/, '');
        assert.ok(existsSync(join(repoRoot, path)), `${path} exists`);
        const files = filesUnder(path).filter((f) => !/(^|\/)(node_modules|dist)(\/|$)/.test(f));
        assert.ok(files.some((f) => !dockerIgnored(f)), `${path} is not excluded by .dockerignore`);
        if (path.endsWith('src')) assert.ok(files.filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts')).every((f) => !dockerIgnored(f)), `every source file under ${path} reaches the build`);
      }
    }
    for (const f of ['.git/HEAD', 'node_modules/kafkajs/package.json', 'services/ingest/dist/main.js', 'test/deploy.test.ts', '.env', '.switchyard/x', 'services/ingest/src/timestamps.test.ts']) {
      assert.ok(dockerIgnored(f), `${f} stays out of the build context`);
    }
  });

  it('copies every npm workspace manifest (npm ci needs them all), and builds every service', () => {
    for (const stage of ['build', 'deps']) {
      const copied = steps.filter((s) => s.stage === stage && s.op === 'COPY').map((s) => s.args.split(/\s+/)[0]);
      for (const ws of workspaces()) assert.ok(copied.includes(`${ws}/package.json`), `${stage} copies ${ws}/package.json`);
    }
    const build = steps.find((s) => s.stage === 'build' && s.op === 'RUN' && s.args.includes('tsc -b'))!.args;
    for (const s of ['setup', ...services]) {
      assert.ok(build.includes(`services/${s}`), `the build compiles services/${s}`);
      assert.ok(steps.some((x) => x.stage === 'runtime' && x.args.startsWith(`--from=build /app/services/${s}/dist/`)), `the runtime stage copies services/${s}/dist`);
    }
  });

  describe('the production start command runs the built code', () => {
    const prefix = uniquePrefix('image');
    const env = { ...pipelineEnv(prefix), SWITCHYARD_ADMIN_TOKEN: 'image-test-admin-token', LOG_LEVEL: 'info', NODE_ENV: 'production' };

    before(() => {
      // The build stage's command, run here: it writes each workspace's dist/ as in the image.
      const build = steps.find((s) => s.stage === 'build' && s.op === 'RUN' && s.args.includes('tsc -b'))!.args;
      const r = run(join(repoRoot, 'node_modules/.bin/tsc'), build.replace(/^npx tsc /, '').split(/\s+/));
      assert.equal(r.status, 0, `the image's build command failed:\n${r.stdout}${r.stderr}`);
    });

    it('what the runtime stage copies from the build stage exists after the build', () => {
      const buildCopies = steps.filter((x) => x.stage === 'build' && x.op === 'COPY').map((x) => x.args.split(/\s+/)[0]!);
      for (const s of steps.filter((x) => x.stage === 'runtime' && x.args.startsWith('--from=build'))) {
        const source = s.args.split(/\s+/)[1]!.replace(/^\/app\//, '').replace(/\/$/, '');
        assert.ok(existsSync(join(repoRoot, source)), `${source} exists after the build`);
        // Run-time files that are not build output (the debugger's static page) come from the
        // checkout: the build stage must copy them, and .dockerignore must let them through.
        if (source.endsWith('/dist') || source.endsWith('package.json')) continue;
        assert.ok(buildCopies.some((c) => `${source}/`.startsWith(c)), `the build stage copies ${source}`);
        assert.ok(filesUnder(source).every((f) => !dockerIgnored(f)), `every file under ${source} reaches the build context`);
      }
    });

    it('the built code imports only production dependencies of the packages in the image', () => {
      const copied = steps.filter((x) => x.stage === 'runtime' && x.args.startsWith('--from=build')).map((s) => s.args.split(/\s+/)[1]!.replace(/^\/app\//, '').replace(/\/$/, ''));
      const packages = copied.filter((p) => p.endsWith('/package.json')).map((p) => p.replace(/\/package\.json$/, ''));
      const allowed = new Set<string>();
      for (const p of packages) {
        const pkg = JSON.parse(read(`${p}/package.json`)) as { name: string; dependencies?: Record<string, string> };
        allowed.add(pkg.name);
        for (const d of Object.keys(pkg.dependencies ?? {})) allowed.add(d);
      }
      const builtins = new Set(builtinModules);
      const bad: string[] = [];
      for (const dir of copied.filter((p) => p.endsWith('/dist'))) {
        for (const file of filesUnder(dir).filter((f) => f.endsWith('.js'))) {
          const code = readFileSync(join(repoRoot, file), 'utf8');
          // Static imports and re-exports start a line; a dynamic import() may stand anywhere. (A
          // looser pattern took a log message ending in "from" for an import.)
          for (const m of code.matchAll(/^\s*(?:import|export)\b[^'"]*?\bfrom\s*['"]([^'"]+)['"]|^\s*import\s*['"]([^'"]+)['"]|\bimport\s*\(\s*['"]([^'"]+)['"]/gm)) {
            const spec = (m[1] ?? m[2] ?? m[3])!;
            if (spec.startsWith('.') || spec.startsWith('node:') || builtins.has(spec)) continue;
            const name = spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0]!;
            if (!allowed.has(name)) bad.push(`${relative(repoRoot, join(repoRoot, file))} imports ${spec}`);
          }
        }
      }
      assert.deepEqual(bad, [], 'imports of packages that are not production dependencies');
    });

    it('an unknown or missing service name exits 2 with the usage', async () => {
      for (const args of [['deploy/docker/start.mjs', 'nope'], ['deploy/docker/start.mjs']]) {
        const p = spawnKept(args, {});
        assert.equal(await p.exited, 2);
        const usage = /usage: start\.mjs <([\w|]+)>/.exec(p.output.join('\n'));
        assert.ok(usage, p.output.join('\n'));
        assert.deepEqual(usage[1]!.split('|').sort(), ['setup', ...services].sort(), 'start.mjs knows every service');
      }
    });

    it('setup, then every service, from dist/ (argument or SWITCHYARD_SERVICE): ready, metrics, SIGTERM exits 0', async () => {
      const setup = spawnKept(['deploy/docker/start.mjs', 'setup'], env);
      assert.equal(await setup.exited, 0, setup.output.slice(-20).join('\n'));
      await Promise.all(services.map(async (name, i) => {
        const port = await freePort();
        const byEnv = i % 2 === 1;
        const p = spawnKept(byEnv ? ['deploy/docker/start.mjs'] : ['deploy/docker/start.mjs', name],
          { ...env, HOST: '127.0.0.1', [`${name.toUpperCase()}_PORT`]: String(port), ...(byEnv ? { SWITCHYARD_SERVICE: name } : {}) });
        try {
          const base = `http://127.0.0.1:${port}`;
          const deadline = Date.now() + 60_000;
          let exit: number | string | undefined;
          void p.exited.then((c) => { exit = c; });
          for (;;) {
            assert.equal(exit, undefined, `${name} exited (${exit}):\n${p.output.slice(-20).join('\n')}`);
            assert.ok(Date.now() < deadline, `${name} not ready within 60 s:\n${p.output.slice(-20).join('\n')}`);
            const ok = await fetch(`${base}/readyz`).then((r) => r.ok, () => false);
            if (ok) break;
            await new Promise((r) => setTimeout(r, 200));
          }
          assert.match(await (await fetch(`${base}/metrics`)).text(), new RegExp(`process_cpu_user_seconds_total\\{service="${name}"\\}`));
          if (name === 'control') {
            // The debugger's static files are found from dist/ as they are in the image.
            for (const [path, type] of [['/debugger', 'text/html'], ['/debugger/app.js', 'text/javascript']] as const) {
              const r = await fetch(`${base}${path}`);
              assert.equal(r.status, 200, `GET ${path} from the built control service`);
              assert.match(r.headers.get('content-type') ?? '', new RegExp(`^${type}`));
            }
          }
          assert.equal(p.child.spawnargs.some((a) => a.includes('tsx') || a.includes('conditions')), false, 'plain node, no TypeScript loader');
          // The service handles SIGTERM itself (no init process in the image). Graceful exit codes
          // are test/services.test.ts's subject; here: it stops, and says it is shutting down.
          p.child.kill('SIGTERM');
          await p.exited;
          assert.ok(p.output.some((l) => l.includes('"msg":"shutting down"')), p.output.slice(-10).join('\n'));
        } finally {
          if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGKILL');
        }
      }));
    });
  });
});
