// A single-node Apache Kafka broker in KRaft mode (broker and controller in one JVM) on 127.0.0.1.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createKafka } from '@switchyard/platform/kafka/client';
import { createLogger } from '@switchyard/platform/logger';
import { spawnManaged, waitUntil, type ManagedProcess } from './process.js';

export interface KafkaOptions {
  libs: string;
  /** Holds config, data (log.dirs) and the broker's own log. */
  dir: string;
  port: number;
  controllerPort: number;
  heap?: string;
}

export interface RunningKafka extends ManagedProcess {
  brokers: string;
}

export function serverProperties({ dir, port, controllerPort }: KafkaOptions): string {
  return [
    'process.roles=broker,controller',
    'node.id=1',
    `controller.quorum.voters=1@127.0.0.1:${controllerPort}`,
    `listeners=PLAINTEXT://127.0.0.1:${port},CONTROLLER://127.0.0.1:${controllerPort}`,
    `advertised.listeners=PLAINTEXT://127.0.0.1:${port}`,
    'inter.broker.listener.name=PLAINTEXT',
    'controller.listener.names=CONTROLLER',
    'listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT',
    `log.dirs=${join(dir, 'data')}`,
    // One broker: internal topics cannot have more than one replica.
    'offsets.topic.replication.factor=1',
    'offsets.topic.num.partitions=10',
    'transaction.state.log.replication.factor=1',
    'transaction.state.log.min.isr=1',
    'transaction.state.log.num.partitions=10',
    'min.insync.replicas=1',
    'default.replication.factor=1',
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
function clusterId(): string {
  return randomBytes(16).toString('base64url');
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
  mkdirSync(opts.dir, { recursive: true });
  const props = join(opts.dir, 'server.properties');
  writeFileSync(props, serverProperties(opts));
  writeFileSync(join(opts.dir, 'log4j.properties'), log4j(opts.dir));

  if (!existsSync(join(opts.dir, 'data', 'meta.properties'))) {
    await new Promise<void>((resolve, reject) => {
      const format = spawn('java', javaArgs(opts, 'kafka.tools.StorageTool', ['format', `--cluster-id=${clusterId()}`, '-c', props, '--ignore-formatted']), { stdio: ['ignore', 'pipe', 'pipe'] });
      let output = '';
      format.stdout.on('data', (d) => { output += d; });
      format.stderr.on('data', (d) => { output += d; });
      format.on('error', reject);
      format.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`formatting Kafka storage failed (${code}):\n${output}`))));
    });
  }

  const proc = await spawnManaged({
    name: 'kafka',
    command: 'java',
    args: javaArgs(opts, 'kafka.Kafka', [props]),
    logFile: join(opts.dir, 'kafka.out'),
    pidFile: join(opts.dir, 'kafka.pid'),
  });
  const brokers = `127.0.0.1:${opts.port}`;
  await waitUntil('Kafka broker', () => brokerAnswers(opts.port), 90_000, proc);
  return { ...proc, brokers };
}

/** Ready when the broker answers a metadata request (it accepts connections before it has joined its KRaft quorum). */
export async function brokerAnswers(port: number): Promise<boolean> {
  const kafka = createKafka({ brokers: [`127.0.0.1:${port}`], clientId: 'switchyard-stack', logger: createLogger({ service: 'stack', level: 'silent' }), overrides: { retry: { retries: 0 } } });
  const admin = kafka.admin();
  try {
    await admin.connect();
    const cluster = await admin.describeCluster();
    return cluster.brokers.length > 0 && cluster.controller !== null;
  } finally {
    await admin.disconnect().catch(() => undefined);
  }
}
