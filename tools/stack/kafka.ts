// Apache Kafka in KRaft mode on 127.0.0.1: one node (broker and controller in one JVM), or a
// cluster of such combined nodes whose controllers form one quorum (every node a voter).
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createKafka } from '@switchyard/platform/kafka/client';
import { createLogger } from '@switchyard/platform/logger';
import { spawnManaged, waitUntil, type ManagedProcess } from './process.js';
import type { KafkaSecuritySettings } from '@switchyard/platform/kafka/security';
import type { Credential } from './credentials.js';

/** Where one node listens: clients on port, the KRaft quorum on controllerPort. */
export interface KafkaAddress {
  port: number;
  controllerPort: number;
}

/** What kafka.ts needs to run a secured node (made by secure.ts). */
export interface BrokerSecurity {
  /** server.properties lines for listeners, TLS, SASL and the authorizer (the file holds the broker's password: mode 0600). */
  properties(address: KafkaAddress): string[];
  /** SCRAM-SHA-512 users created when the storage is formatted. */
  scramUsers: readonly Credential[];
  /** How the stack's own admin client connects. */
  client: KafkaSecuritySettings;
}

export interface KafkaOptions extends KafkaAddress {
  libs: string;
  /** Holds config, data (log.dirs) and the broker's own log. */
  dir: string;
  heap?: string;
  /** This node's id (1-based) among `cluster`; default 1. */
  nodeId?: number;
  /** Every node of the cluster, node i at index i − 1 (default: this node alone). */
  cluster?: KafkaAddress[];
  /** The cluster id to format new storage with (all nodes of a cluster share one); default a new one. */
  clusterId?: string;
  /** Listeners on TLS and SASL, the authorizer, SCRAM users (secure.ts); one node only. Default: plaintext, no authorization. */
  security?: BrokerSecurity;
  /** More `key=value` lines, over the defaults above them (the failover bench's broker session timeout). */
  properties?: string[];
}

export interface RunningKafka extends ManagedProcess {
  brokers: string;
}

/**
 * Replication of the internal topics (__consumer_offsets, __transaction_state), the default for
 * new topics, and the least in-sync replicas an acks=all write needs, for a cluster of n brokers:
 * one broker has one copy of everything; three or more keep three copies and accept a write once
 * two have it, so one broker may be down without stopping writes or losing acknowledged ones.
 */
export function replicationFor(brokers: number): { replicationFactor: number; minInsyncReplicas: number } {
  const replicationFactor = Math.min(Math.max(brokers, 1), 3);
  return { replicationFactor, minInsyncReplicas: replicationFactor >= 3 ? 2 : 1 };
}

export function serverProperties({ dir, port, controllerPort, nodeId = 1, cluster, security, properties = [] }: Omit<KafkaOptions, 'libs'>): string {
  const nodes = cluster ?? [{ port, controllerPort }];
  const { replicationFactor: rf, minInsyncReplicas: minIsr } = replicationFor(nodes.length);
  return [
    'process.roles=broker,controller',
    `node.id=${nodeId}`,
    `controller.quorum.voters=${nodes.map((n, i) => `${i + 1}@127.0.0.1:${n.controllerPort}`).join(',')}`,
    ...(security ? security.properties({ port, controllerPort }) : [
      `listeners=PLAINTEXT://127.0.0.1:${port},CONTROLLER://127.0.0.1:${controllerPort}`,
      `advertised.listeners=PLAINTEXT://127.0.0.1:${port}`,
      'inter.broker.listener.name=PLAINTEXT',
      'controller.listener.names=CONTROLLER',
      'listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT',
    ]),
    `log.dirs=${join(dir, 'data')}`,
    // One broker: internal topics cannot have more than one replica. Three or more: three copies,
    // two of them needed for a write (replicationFor).
    `offsets.topic.replication.factor=${rf}`,
    'offsets.topic.num.partitions=10',
    `transaction.state.log.replication.factor=${rf}`,
    `transaction.state.log.min.isr=${minIsr}`,
    'transaction.state.log.num.partitions=10',
    `min.insync.replicas=${minIsr}`,
    `default.replication.factor=${rf}`,
    // Consumers join at once instead of waiting 3 s for more members.
    'group.initial.rebalance.delay.ms=0',
    // Topics are declared by Switchyard's admin step; a typo must not create one.
    'auto.create.topics.enable=false',
    'num.partitions=1',
    'log.retention.hours=168',
    'log.segment.bytes=104857600',
    'log.cleaner.enable=true',
    'num.network.threads=3',
    'num.io.threads=4',
    ...properties,
    '',
  ].join('\n');
}

const log4j = (dir: string) => [
  'log4j.rootLogger=INFO, file',
  'log4j.appender.file=org.apache.log4j.RollingFileAppender',
  `log4j.appender.file.File=${join(dir, 'kafka.log')}`,
  'log4j.appender.file.MaxFileSize=20MB',
  'log4j.appender.file.MaxBackupIndex=2',
  'log4j.appender.file.layout=org.apache.log4j.PatternLayout',
  'log4j.appender.file.layout.ConversionPattern=[%d] %p %m (%c)%n',
  'log4j.logger.kafka.request.logger=WARN',
  'log4j.logger.org.apache.kafka.controller=INFO',
  'log4j.logger.state.change.logger=WARN',
  '',
].join('\n');

/** Kafka's cluster ids are 16 random bytes in URL-safe base64 without padding (so one may start with `-`: pass it as `--cluster-id=…`). */
export function newClusterId(): string {
  return randomBytes(16).toString('base64url');
}

/** The cluster id a node's storage was formatted with, or undefined when it is not formatted. */
export function formattedClusterId(dir: string): string | undefined {
  const meta = join(dir, 'data', 'meta.properties');
  if (!existsSync(meta)) return undefined;
  return /^cluster\.id=(.+)$/m.exec(readFileSync(meta, 'utf8'))?.[1]?.trim();
}

function javaArgs(opts: KafkaOptions, mainClass: string, rest: string[]): string[] {
  return [
    `-Xms256m`, `-Xmx${opts.heap ?? '1g'}`, '-XX:+UseG1GC', '-XX:MaxGCPauseMillis=20', '-Djava.awt.headless=true',
    `-Dlog4j.configuration=file:${join(opts.dir, 'log4j.properties')}`,
    `-Dkafka.logs.dir=${opts.dir}`,
    '-cp', `${opts.libs}/*`, mainClass, ...rest,
  ];
}

export async function startKafka(opts: KafkaOptions): Promise<RunningKafka> {
  const proc = await launchNode(opts);
  const brokers = `127.0.0.1:${opts.port}`;
  try {
    await waitUntil('Kafka broker', () => brokerAnswers(opts.port, opts.security?.client), 90_000, proc);
  } catch (err) {
    // Never ready: nobody else holds it to stop it.
    await proc.stop();
    throw err;
  }
  return { ...proc, brokers };
}

export interface ClusterOptions {
  libs: string;
  /** Node i keeps its config, data and log in dir/kafka-i. */
  dir: string;
  nodes: KafkaAddress[];
  /** Maximum heap of each node; default 512m. */
  heap?: string;
  /** More server.properties lines of every node. */
  properties?: string[];
}

export interface RunningCluster {
  /** Every node's client address, comma-separated (KAFKA_BROKERS). */
  brokers: string;
  nodes: RunningKafka[];
  /** Stops every node at once (a quorum member stopped after the others would wait for them). */
  stop(): Promise<void>;
}

/** The directory of node i (1-based) of a cluster under dir. */
export const nodeDir = (dir: string, nodeId: number) => join(dir, `kafka-${nodeId}`);

/**
 * Starts a cluster of combined broker+controller nodes, every one a quorum voter, and resolves
 * once the nodes report every broker registered and a controller elected. Storage already
 * formatted (a restart of the same directory) keeps its cluster id; new storage gets the same one.
 */
export async function startKafkaCluster({ libs, dir, nodes, heap = '512m', properties }: ClusterOptions): Promise<RunningCluster> {
  const clusterId = nodes.map((_, i) => formattedClusterId(nodeDir(dir, i + 1))).find((id) => id !== undefined) ?? newClusterId();
  const started = await Promise.allSettled(nodes.map((n, i) => launchNode({ libs, dir: nodeDir(dir, i + 1), heap, properties, nodeId: i + 1, cluster: nodes, clusterId, ...n })));
  const running = started.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
  const stop = async () => { await Promise.all(running.map((p) => p.stop())); };
  const failed = started.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) { await stop(); throw failed.reason; }
  try {
    await waitUntil(`Kafka cluster of ${nodes.length}`, () => clusterAnswers(nodes.map((n) => n.port), nodes.length), 120_000, running[0]);
  } catch (err) {
    await stop();
    throw err;
  }
  return { brokers: nodes.map((n) => `127.0.0.1:${n.port}`).join(','), nodes: running.map((p, i) => ({ ...p, brokers: `127.0.0.1:${nodes[i]!.port}` })), stop };
}

/** Writes a node's config, formats its storage if new, and starts its JVM (without waiting for it to serve). */
async function launchNode(opts: KafkaOptions): Promise<ManagedProcess> {
  mkdirSync(opts.dir, { recursive: true });
  const props = join(opts.dir, 'server.properties');
  // A secured node's properties hold its SASL password.
  writeFileSync(props, serverProperties(opts), { mode: 0o600 });
  chmodSync(props, 0o600);
  writeFileSync(join(opts.dir, 'log4j.properties'), log4j(opts.dir));

  if (formattedClusterId(opts.dir) === undefined) {
    // SCRAM users go in an argument file the launcher expands, so no password is on a command line (ps).
    const scramArgs = join(opts.dir, 'format-scram.args');
    const scram = opts.security?.scramUsers ?? [];
    if (scram.length) writeFileSync(scramArgs, scram.map((u) => `--add-scram\nSCRAM-SHA-512=[name=${u.user},password=${u.password}]\n`).join(''), { mode: 0o600 });
    try {
      await new Promise<void>((resolve, reject) => {
        const format = spawn('java', javaArgs(opts, 'kafka.tools.StorageTool', ['format', `--cluster-id=${opts.clusterId ?? newClusterId()}`, '-c', props, '--ignore-formatted', ...(scram.length ? [`@${scramArgs}`] : [])]), { stdio: ['ignore', 'pipe', 'pipe'] });
        let output = '';
        format.stdout.on('data', (d) => { output += d; });
        format.stderr.on('data', (d) => { output += d; });
        format.on('error', reject);
        format.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`formatting Kafka storage failed (${code}):\n${output}`))));
      });
    } finally {
      rmSync(scramArgs, { force: true });
    }
  }

  return spawnManaged({
    name: opts.cluster && opts.cluster.length > 1 ? `kafka-${opts.nodeId ?? 1}` : 'kafka',
    command: 'java',
    args: javaArgs(opts, 'kafka.Kafka', [props]),
    logFile: join(opts.dir, 'kafka.out'),
    pidFile: join(opts.dir, 'kafka.pid'),
  });
}

/** Ready when the broker answers a metadata request (it accepts connections before it has joined its KRaft quorum). */
export async function brokerAnswers(port: number, security?: KafkaSecuritySettings): Promise<boolean> {
  return clusterAnswers([port], 1, security);
}

/** Ready when the nodes answer a metadata request listing at least `brokers` brokers and an elected controller. */
export async function clusterAnswers(ports: number[], brokers: number, security?: KafkaSecuritySettings): Promise<boolean> {
  const kafka = createKafka({ brokers: ports.map((p) => `127.0.0.1:${p}`), clientId: 'switchyard-stack', logger: createLogger({ service: 'stack', level: 'silent' }), ...(security ? { security } : {}), overrides: { retry: { retries: 0 } } });
  const admin = kafka.admin();
  try {
    await admin.connect();
    const cluster = await admin.describeCluster();
    return cluster.brokers.length >= brokers && cluster.controller !== null;
  } finally {
    await admin.disconnect().catch(() => undefined);
  }
}
