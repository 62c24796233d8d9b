import { CONCURRENT_TRANSACTIONS_MESSAGE, Kafka, logLevel, type Producer, type Admin, type Consumer, type ConsumerConfig, type ConsumerRunConfig, type EachBatchPayload, type KafkaConfig, type LogEntry } from '../kafkajs/index.js';
import { JavaCompatiblePartitioner } from './partitioner.js';
import type { Logger } from '../logger.js';
import { stableRoundRobin } from './stable-round-robin.js';
import { kafkaSecurityOptions, PLAINTEXT, type KafkaSecuritySettings } from './security.js';
import { consumerAccess, guardAdmin, guardConsumer, guardProducer, subscribedTopics } from './access-guard.js';
import { failureWatch, kafkaLogLine, RepeatCollapser } from './failure-watch.js';

// kafkajs comes in, corrected, through kafkajs/index.ts alone, so the client can be swapped later.
export type { Producer, Admin, Consumer, Kafka, EachBatchPayload };

export interface KafkaSettings {
  brokers: string[];
  clientId: string;
  logger: Logger;
  /**
   * How to connect (KAFKA_SECURITY_PROTOCOL and its companions, as loadConfig parsed them: a
   * service passes its config); PLAINTEXT when absent. Applied after `overrides`, so the
   * environment decides TLS and SASL.
   */
  security?: KafkaSecuritySettings;
  /** Extra kafkajs settings (timeouts, retries). */
  overrides?: Partial<KafkaConfig>;
}

/**
 * How every client retries a refused or failed request: from 200 ms, doubling, then every second,
 * about 50 s in all before the error reaches the caller. The wait between tries stops at 1 s because
 * a partition whose leader died is served again once the controller fences that broker
 * (broker.session.timeout.ms, 9 s by default): kafkajs's own cap, 30 s, let a send wait up to 6 s
 * more after that, every event behind it too (the failover rows, BENCHMARKS.md).
 */
export const CLIENT_RETRY = { initialRetryTime: 200, maxRetryTime: 1000, retries: 50 };

const levelNames: Record<number, 'error' | 'warn' | 'info' | 'debug'> = {
  [logLevel.ERROR]: 'error', [logLevel.WARN]: 'warn', [logLevel.INFO]: 'info', [logLevel.DEBUG]: 'debug',
};

/**
 * A kafkajs client whose log lines go through the service's pino logger, repeats collapsed, and
 * whose failures are judged by the process's failure watch (failure-watch.ts): a refused
 * credential, an untrusted certificate or a missing ACL stops the service with one line naming
 * the variable or the ACL; every producer, consumer and admin it makes reports what it touched.
 */
export function createKafka({ brokers, clientId, logger, security = PLAINTEXT, overrides }: KafkaSettings): Kafka {
  const log = logger.child({ component: 'kafka' });
  const collapser = new RepeatCollapser();
  failureWatch.useKafka(brokers, security);
  const kafka = new Kafka({
    clientId,
    brokers,
    connectionTimeout: 3000,
    requestTimeout: 30_000,
    retry: CLIENT_RETRY,
    logLevel: logLevel.WARN,
    logCreator: () => ({ namespace, level, log: entry }: LogEntry) => {
      // Refused while the previous transaction completes, and retried at once (kafkajs/concurrent-transactions-retry.ts).
      const routine = entry.error === CONCURRENT_TRANSACTIONS_MESSAGE;
      const line = kafkaLogLine(failureWatch, collapser, routine ? 'debug' : levelNames[level] ?? 'info', namespace, entry as unknown as Record<string, unknown>);
      if (line) log[line.level](line.fields, line.msg);
    },
    ...overrides,
    ...kafkaSecurityOptions(security),
  });
  const { producer, consumer, admin } = kafka;
  kafka.producer = (config) => guardProducer(failureWatch, producer.call(kafka, config), config?.transactionalId);
  kafka.consumer = (config) => guardConsumer(failureWatch, consumer.call(kafka, config), config.groupId);
  kafka.admin = (config) => guardAdmin(failureWatch, admin.call(kafka, config));
  return kafka;
}

/**
 * The producer every service writes with: idempotent (no duplicates from its own retries),
 * acks=all on every send (see `send` callers), Java-compatible murmur2 partitioning so records keyed
 * by a direct producer and by Switchyard land on the same partition (kafkajs's default, hashed faster:
 * partitioner.ts).
 */
export function createProducer(kafka: Kafka, opts: { transactionalId?: string; transactionTimeout?: number } = {}): Producer {
  return kafka.producer({
    idempotent: true,
    maxInFlightRequests: 1,
    allowAutoTopicCreation: false,
    createPartitioner: JavaCompatiblePartitioner,
    ...(opts.transactionalId ? { transactionalId: opts.transactionalId, transactionTimeout: opts.transactionTimeout ?? 60_000 } : {}),
  });
}

/**
 * How the pipeline's stages (fan-out, delivery) fetch. A fetch returns as soon as any record is
 * there (minBytes 1): a lone call is never held back for a batch to fill. Under load, records pile
 * up while the previous fetch is being processed, so batches grow by themselves without a knob.
 * maxWait only bounds an idle poll (and how long a stop waits for it). Fetches that waited for
 * 64 KB or 100 ms would hold every call at light and moderate rates (the latency rows of
 * BENCHMARKS.md measure this).
 */
export const STAGE_FETCH = { minBytes: 1, maxWaitTimeInMs: 100, maxBytesPerPartition: 1 << 20 } as const;

/**
 * A consumer that keeps consuming through broker outages. kafkajs restarts a crashed consumer only
 * when the cause is retriable, and some causes of a long outage are not: after a broker SIGKILL,
 * "Failed to find group coordinator" (KafkaJSGroupCoordinatorNotFound once its retries ran out)
 * left fan-out connected, unready and consuming nothing until restarted by hand (found by the broker
 * fault suite, RELIABILITY.md). Such a consumer is connected and run again with the same handlers,
 * backing off from 1 s to 30 s, until stop() or disconnect() is called. Offsets are untouched: it
 * rejoins its group and resumes from the committed offsets, like after a rebalance.
 */
export function createConsumer(kafka: Kafka, config: ConsumerConfig, logger?: Logger): Consumer {
  const consumer = kafka.consumer({ allowAutoTopicCreation: false, partitionAssigners: [stableRoundRobin], ...config });
  const { run, stop, disconnect } = consumer;
  let runConfig: ConsumerRunConfig | undefined;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  consumer.run = (cfg) => { runConfig = cfg; stopped = false; return run(cfg); };
  consumer.stop = () => { stopped = true; clearTimeout(timer); return stop(); };
  consumer.disconnect = () => { stopped = true; clearTimeout(timer); return disconnect(); };
  const runAgain = (delayMs: number): void => {
    timer = setTimeout(() => {
      if (stopped || !runConfig) return;
      consumer.connect().then(() => run(runConfig!)).then(
        () => logger?.warn({ groupId: config.groupId }, 'consumer running again after a crash kafkajs does not recover from'),
        (err: unknown) => {
          logger?.warn({ err, groupId: config.groupId, retryInMs: Math.min(delayMs * 2, 30_000) }, 'running the consumer again failed');
          runAgain(Math.min(delayMs * 2, 30_000));
        },
      );
    }, delayMs);
    timer.unref();
  };
  consumer.on(consumer.events.CRASH, ({ payload }) => {
    // A missing ACL or refused credentials stop the process here rather than restart it forever.
    failureWatch.kafkaError(payload.error, consumerAccess(config.groupId, subscribedTopics(consumer)));
    if (!payload.restart && !stopped && runConfig) runAgain(1000);
  });
  return consumer;
}
