import { Kafka, logLevel, Partitioners, type Producer, type Admin, type Consumer, type ConsumerConfig, type EachBatchPayload, type KafkaConfig, type LogEntry } from 'kafkajs';
import type { Logger } from '../logger.js';

// Every kafkajs import of the code base lives under kafka/, so the client can be swapped later.
export type { Producer, Admin, Consumer, Kafka, EachBatchPayload };

export interface KafkaSettings {
  brokers: string[];
  clientId: string;
  logger: Logger;
  /** Extra kafkajs settings (ssl, sasl, timeouts) for deployments. */
  overrides?: Partial<KafkaConfig>;
}

const levelNames: Record<number, 'error' | 'warn' | 'info' | 'debug'> = {
  [logLevel.ERROR]: 'error', [logLevel.WARN]: 'warn', [logLevel.INFO]: 'info', [logLevel.DEBUG]: 'debug',
};

/** A kafkajs client whose log lines go through the service's pino logger. */
export function createKafka({ brokers, clientId, logger, overrides }: KafkaSettings): Kafka {
  const log = logger.child({ component: 'kafka' });
  return new Kafka({
    clientId,
    brokers,
    connectionTimeout: 3000,
    requestTimeout: 30_000,
    retry: { initialRetryTime: 200, retries: 8 },
    logLevel: logLevel.WARN,
    logCreator: () => ({ namespace, level, log: entry }: LogEntry) => {
      const { message, ...rest } = entry;
      log[levelNames[level] ?? 'info']({ namespace, ...rest }, message);
    },
    ...overrides,
  });
}

/**
 * The producer every service writes with: idempotent (no duplicates from its own retries),
 * acks=all on every send (see `send` callers), Java-compatible murmur2 partitioning so records keyed
 * by a direct producer and by Switchyard land on the same partition.
 */
export function createProducer(kafka: Kafka, opts: { transactionalId?: string } = {}): Producer {
  return kafka.producer({
    idempotent: true,
    maxInFlightRequests: 1,
    allowAutoTopicCreation: false,
    createPartitioner: Partitioners.DefaultPartitioner,
    ...(opts.transactionalId ? { transactionalId: opts.transactionalId, transactionTimeout: 60_000 } : {}),
  });
}

export function createConsumer(kafka: Kafka, config: ConsumerConfig): Consumer {
  return kafka.consumer({ allowAutoTopicCreation: false, ...config });
}
