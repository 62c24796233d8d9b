// What the benchmark starts and feeds: the stack (reused from KAFKA_BROKERS / SCHEMA_REGISTRY_URL or
// started fresh), one topic prefix per pipeline (setup), sources and destinations written to the
// config topic, the services spawned from source through tsx exactly as `npm start` and the tests
// run them, delivery tasks written straight to the delivery topic, and RSS read from /proc.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { AssignerProtocol, Kafka, logLevel, Partitioners, type Admin, type Producer } from '@switchyard/platform/kafkajs/index';
import { AvroCodec } from '@switchyard/platform/codec/avro-codec';
import { z } from 'zod';
import { registryConnection, type RegistryConnection } from '@switchyard/platform/codec/registry-connection';
import { kafkaSecurityEnv, loadConfig, registryEnv } from '@switchyard/platform/config';
import { kafkaSecurityOptions, PLAINTEXT, type KafkaSecuritySettings } from '@switchyard/platform/kafka/security';
import { configKey, type Destination, type Source } from '@switchyard/platform/config-view/config-state';
import { topicNames } from '@switchyard/platform/kafka/topics';
import type { DeliveryTask } from '@switchyard/platform/schemas/generated';
import { repoRoot } from '../stack/paths.js';
import { benchUserKey, benchWebhookBody } from './bench-webhook-body.js';
import { deployedNodeOptions } from './deployed-node-options.js';
import { parseInstances, serviceInstances, type ScaledService } from '../stack/layout.js';
import { freePort } from '../stack/ports.js';
import { exitWithParent } from '../stack/process.js';
import { runOnce, spawnService, waitForHttp, type ServiceCode, type ServiceProcess } from '../stack/services.js';

/** The stack the bench uses; a reused one may be secured (KAFKA_SECURITY_PROTOCOL …, SCHEMA_REGISTRY_BASIC_AUTH_USER_INFO …). */
export interface StackRef { brokers: string; registryUrl: string; security?: KafkaSecuritySettings; registry?: Omit<RegistryConnection, 'registryUrl'> }

export function rawKafka(stack: StackRef, clientId: string, retries = 8): Kafka {
  return new Kafka({ clientId, brokers: stack.brokers.split(','), logLevel: logLevel.ERROR, retry: { retries, initialRetryTime: 200 }, ...kafkaSecurityOptions(stack.security ?? PLAINTEXT) });
}

/** How to reach a reused stack, from the same variables the services read (config.ts). */
export function reusedStackSecurity(): Pick<StackRef, 'security' | 'registry'> {
  const config = loadConfig(z.object({ ...kafkaSecurityEnv, ...registryEnv }));
  const { registryUrl: _, ...registry } = registryConnection(config);
  return { security: config, registry };
}

export function benchCodec(stack: StackRef): AvroCodec {
  return new AvroCodec({ registryUrl: stack.registryUrl, ...stack.registry });
}

export function makeSource(): Source {
  const now = Date.now();
  return { id: `src_${randomBytes(6).toString('hex')}`, name: 'Bench source', enabled: true, writeKeys: [randomBytes(24).toString('base64url')], createdAt: now, updatedAt: now };
}

export function makeDestination(sourceId: string, urls: string[]): Destination {
  const now = Date.now();
  return {
    id: `dst_${randomBytes(6).toString('hex')}`, sourceId, name: 'Bench webhooks', type: 'webhooks', enabled: true, sharedSecret: 'bench-secret',
    webhooks: urls.map((url) => ({ url, headers: {}, clientCertificate: null })), createdAt: now, updatedAt: now, filter: null, standardSignatures: false, rateLimit: null, signingSecrets: [], retry: null, disabledReason: null, disabledAt: null, notificationTypes: [],
  };
}

/** `stop`: SIGTERM, then SIGKILL after `graceMs` (default 15 s). */
export interface Service { name: string; url: string; proc: ServiceProcess; stop(graceMs?: number): Promise<number | string> }

const portVars: Record<string, string> = { ingest: 'INGEST_PORT', fanout: 'FANOUT_PORT', delivery: 'DELIVERY_PORT', control: 'CONTROL_PORT', audiences: 'AUDIENCES_PORT' };

/** One topic prefix with its own topics, config and services. */
export class Pipeline {
  readonly topics;
  readonly env: NodeJS.ProcessEnv;
  readonly services: Service[] = [];
  private codec: AvroCodec | undefined;
  private producer: Producer | undefined;
  private admin: Admin | undefined;

  /** `code`: the services' built JavaScript (as deployed; the bench's default) or their TypeScript through tsx (--source). */
  constructor(readonly stack: StackRef, readonly prefix: string, env: NodeJS.ProcessEnv, readonly code: ServiceCode) {
    this.topics = topicNames(prefix);
    this.env = { KAFKA_BROKERS: stack.brokers, SCHEMA_REGISTRY_URL: stack.registryUrl, SWITCHYARD_TOPIC_PREFIX: prefix, LOG_LEVEL: 'warn', SWITCHYARD_ALLOWED_CIDRS: '127.0.0.0/8', ...env };
  }

  async setup(): Promise<void> {
    await runOnce('setup', { env: this.env, code: this.code });
    this.codec = benchCodec(this.stack);
    await this.codec.register(['io.switchyard.config.Source', 'io.switchyard.config.Destination', 'io.switchyard.pipeline.DeliveryTask']);
    this.producer = rawKafka(this.stack, 'bench-writer').producer({ allowAutoTopicCreation: false, createPartitioner: Partitioners.DefaultPartitioner });
    await this.producer.connect();
  }

  /** Writes sources and destinations to the config topic, a thousand records a send (a send is one request, under the broker's size limit). */
  async writeConfig(sources: Source[], destinations: Destination[]): Promise<void> {
    const codec = this.codec!;
    const messages = [
      ...sources.map((s) => ({ key: configKey.source(s.id), value: codec.encode('io.switchyard.config.Source', s) })),
      ...destinations.map((d) => ({ key: configKey.destination(d.id), value: codec.encode('io.switchyard.config.Destination', d) })),
    ];
    for (let i = 0; i < messages.length; i += 1000) await this.producer!.send({ topic: this.topics.config, acks: -1, messages: messages.slice(i, i + 1000) });
  }

  /** Writes delivery tasks (as fan-out would) in chunks, a few sends at a time. */
  async writeTasks(destination: Destination, ids: string[], chunk = 1000): Promise<void> {
    const now = Date.now();
    const sends: Array<Promise<unknown>> = [];
    for (let i = 0; i < ids.length; i += chunk) {
      const messages = ids.slice(i, i + chunk).map((messageId, j) => this.taskRecord(destination, messageId, i + j, now));
      sends.push(this.producer!.send({ topic: this.topics.delivery, acks: -1, messages }));
      if (sends.length >= 8) await Promise.all(sends.splice(0));
    }
    await Promise.all(sends);
  }

  /** The encoded size of a delivery task with this webhook body (the bare fan-out writes records of a task's size). */
  taskBytes(destination: Destination, messageId: string, body: string): number {
    return this.taskRecord(destination, messageId, 0, Date.now(), body).value.length;
  }

  /** The i-th task's record (key and Avro value), with the bench's webhook body unless given one. */
  private taskRecord(destination: Destination, messageId: string, i: number, now: number, body?: string): { key: string; value: Buffer } {
    const userKey = benchUserKey(i);
    const t: DeliveryTask = {
      taskId: `${messageId}:${destination.id}`, messageId, sourceId: destination.sourceId, destinationId: destination.id, eventType: 'track', userKey,
      body: body ?? benchWebhookBody(messageId, i, new Date(now).toISOString()),
      receivedAt: now, createdAt: now, attempt: 0, firstAttemptAt: null, deadline: null, notBefore: null, pendingUrls: null, lastStatus: null, lastError: null,
    };
    return { key: `${destination.id}:${userKey}`, value: this.codec!.encode('io.switchyard.pipeline.DeliveryTask', t) };
  }

  async start(name: string, extra: NodeJS.ProcessEnv = {}): Promise<Service> {
    const port = await freePort();
    // The manifest's heap settings, as deployed (BENCH_SERVICE_NODE_OPTIONS instead, for every
    // service, to compare others; empty for Node's defaults), then the bench's own (the --profile hook).
    const nodeOptions = [process.env.BENCH_SERVICE_NODE_OPTIONS ?? deployedNodeOptions(name), this.env.NODE_OPTIONS ?? ''].join(' ').trim();
    const env = { ...this.env, ...extra, [portVars[name]!]: String(port), ...(nodeOptions ? { NODE_OPTIONS: nodeOptions } : {}) };
    const proc = spawnService(name, { env, echo: process.env.BENCH_ECHO === '1', code: this.code });
    const url = `http://127.0.0.1:${port}`;
    try {
      await waitForHttp(`${url}/readyz`, 90_000, proc);
    } catch (err) {
      await proc.stop('SIGKILL');
      throw err;
    }
    const service: Service = { name, url, proc, stop: (graceMs = 15_000) => proc.stop('SIGTERM', graceMs) };
    this.services.push(service);
    return service;
  }

  /** Stops the running service of that name and starts it again with extra environment. */
  async restart(name: string, extra: NodeJS.ProcessEnv = {}): Promise<Service> {
    const i = this.services.findIndex((x) => x.name === name);
    if (i >= 0) await this.services.splice(i, 1)[0]!.stop();
    return this.start(name, extra);
  }

  /**
   * Replaces one instance as a Deployment rolls with maxSurge 1 and maxUnavailable 0: its
   * replacement started and ready, then SIGTERM of the old one (SIGKILL after `graceMs`). Resolves with the old one's exit.
   */
  async replace(old: Service, opts: { graceMs?: number; onStopping?: () => void } = {}): Promise<number | string> {
    await this.start(old.name);
    this.services.splice(this.services.indexOf(old), 1);
    opts.onStopping?.();
    return old.stop(opts.graceMs);
  }

  /** The running instances of one service, oldest first. */
  instances(name: string): Service[] {
    return this.services.filter((x) => x.name === name);
  }

  /**
   * Starts or stops instances of one service until `count` run (the newest stop first, SIGTERM),
   * laid out as `npm start -- --instances` lays them out (tools/stack/layout.ts: with several, each
   * fan-out or audiences instance gets a transactional id of its own), each on a free port. They
   * share the service's consumer group, so Kafka splits the partitions between them.
   */
  async scale(name: ScaledService, count: number, extra: NodeJS.ProcessEnv = {}): Promise<Service[]> {
    const running = this.instances(name);
    if (running.length > count) {
      const leaving = running.slice(count);
      for (const x of leaving) this.services.splice(this.services.indexOf(x), 1);
      await Promise.all(leaving.map((x) => x.stop()));
    } else if (running.length < count) {
      // start() sets the port itself (a free one), over the layout's fixed port.
      const layout = serviceInstances(parseInstances(`${name}=${count}`)).filter((x) => x.service === name);
      await Promise.all(layout.slice(running.length).map((x) => this.start(name, { ...extra, ...x.env })));
    }
    return this.instances(name);
  }

  /**
   * Waits until a consumer group is Stable with `members` members, each assigned some partition of
   * `topic` (no rebalance left to happen under a load), and returns how many partitions of `topic`
   * each member holds.
   */
  async waitForGroup(groupId: string, members: number, topic: string, timeoutMs = 60_000): Promise<number[]> {
    // No retries of its own: kafkajs retries DescribeGroups at the coordinator it found first, which
    // is the wrong one for good once the coordinator moved (a broker restarted); each turn of the loop finds it again.
    if (!this.admin) { this.admin = rawKafka(this.stack, 'bench-admin', 0).admin(); await this.admin.connect(); }
    const deadline = Date.now() + timeoutMs;
    let seen = '';
    for (;;) {
      const described = await this.admin.describeGroups([groupId]).catch((err: unknown) => { seen = String(err); return undefined; });
      if (!described) {
        if (Date.now() > deadline) throw new Error(`group ${groupId}: not described within ${timeoutMs} ms (${seen})`);
        await new Promise((r) => setTimeout(r, 250));
        continue;
      }
      const { groups: [g] } = described;
      const held = (g?.members ?? []).map((m) => AssignerProtocol.MemberAssignment.decode(m.memberAssignment)?.assignment[topic]?.length ?? 0);
      if (g?.state === 'Stable' && held.length === members && held.every((n) => n > 0)) return held;
      seen = `${g?.state ?? 'no group'}, members holding ${held.join('/') || 'nothing'}`;
      if (Date.now() > deadline) throw new Error(`group ${groupId}: not stable with ${members} members after ${timeoutMs} ms (${seen})`);
      await new Promise((r) => setTimeout(r, 250));
    }
  }

  async stopAll(): Promise<void> {
    await Promise.all(this.services.splice(0).map((s) => s.stop()));
    await this.producer?.disconnect();
    this.producer = undefined;
    await this.admin?.disconnect();
    this.admin = undefined;
  }
}

/** Resident set size of a process in MB (Linux /proc), or NaN elsewhere. */
export function rssMb(pid: number | undefined): number {
  if (!pid) return NaN;
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : NaN;
  } catch {
    return NaN;
  }
}

/** One of the bench's own programs (tools/bench/<file>) as a child process through tsx; its stdout is piped, its stderr inherited. */
export function spawnBenchProgram(file: string, env: NodeJS.ProcessEnv): ChildProcess {
  const [command, args] = exitWithParent(process.execPath, ['--conditions=source', '--import', 'tsx', join(repoRoot, 'tools', 'bench', file)]);
  return spawn(command, args, {
    cwd: repoRoot, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'],
  });
}

/** Baseline (c) as its own process: resolves with its URL and a stop function. */
export async function startBareIngest(stack: StackRef, topic: string, writeKey: string): Promise<{ url: string; child: ChildProcess; stop(): Promise<void> }> {
  const child = spawnBenchProgram('bare-ingest.ts', { KAFKA_BROKERS: stack.brokers, BARE_TOPIC: topic, BARE_WRITE_KEY: writeKey });
  const port = await new Promise<number>((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error('bare ingest did not start')), 60_000);
    child.stdout!.on('data', (c: Buffer) => { out += c.toString(); const m = /listening (\d+)/.exec(out); if (m) { clearTimeout(timer); resolve(Number(m[1])); } });
    child.once('exit', (code) => { clearTimeout(timer); reject(new Error(`bare ingest exited ${code}`)); });
  });
  return {
    url: `http://127.0.0.1:${port}`, child,
    stop: () => new Promise<void>((resolve) => { if (child.exitCode !== null) { resolve(); return; } child.once('exit', () => resolve()); child.kill('SIGTERM'); }),
  };
}
