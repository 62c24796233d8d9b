import { AvroCodec, type AvroSchemaName } from './codec/avro-codec.js';
import { registryConnection } from './codec/registry-connection.js';
import type { CommonConfig, KafkaSecurityConfig, RegistryConfig } from './config.js';
import { ConfigView } from './config-view/config-view.js';
import { createKafka, createProducer, type Kafka, type Producer } from './kafka/client.js';
import { connectClient } from './kafka/connect.js';
import { describeKafkaSecurity } from './kafka/security.js';
import type { GroupOffsetCommitter } from './exactly-once/group-offset-committer.js';
import { kafkajsPartitionSource } from './kafka/kafkajs-partition-source.js';
import { committedOffsetReader, PartitionTransactions, type PartitionTransactionsOptions } from './exactly-once/partition-transactions.js';
import { partitionTransactionalId, type TransactionalStage } from './kafka/groups.js';
import { PositionLog } from './exactly-once/position-log.js';
import { topicNames, type TopicNames } from './kafka/topics.js';
import type { ServiceRuntime } from './runtime.js';

/** What a service's parsed config (commonEnv) gives the pipeline: brokers, how to reach them and the registry, naming. */
export type PipelineSettings = Pick<CommonConfig, 'KAFKA_BROKERS' | 'SWITCHYARD_TOPIC_PREFIX' | keyof KafkaSecurityConfig | keyof RegistryConfig>;

/**
 * The Kafka side every pipeline service needs: a client, its producer (idempotent), the codec with
 * its schemas registered, the topic names.
 */
export interface PipelineClients {
  kafka: Kafka;
  producer: Producer;
  codec: AvroCodec;
  topics: TopicNames;
}

export async function connectPipeline(runtime: ServiceRuntime, config: PipelineSettings, schemas: readonly AvroSchemaName[]): Promise<PipelineClients> {
  const kafka = createKafka({ brokers: config.KAFKA_BROKERS, clientId: `switchyard-${runtime.service}`, logger: runtime.logger, security: config });
  runtime.logger.info({ brokers: config.KAFKA_BROKERS, ...describeKafkaSecurity(config), registry: config.SCHEMA_REGISTRY_URL, registryBasicAuth: config.SCHEMA_REGISTRY_BASIC_AUTH_USER_INFO !== undefined }, 'connecting to Kafka and the schema registry');
  const codec = new AvroCodec(registryConnection(config));
  runtime.readiness.set('schemas', false);
  const producer = createProducer(kafka);
  await connectClient(runtime.lifecycle, 'producer', producer);
  await codec.register(schemas);
  runtime.readiness.set('schemas', true);
  return { kafka, producer, codec, topics: topicNames(config.SWITCHYARD_TOPIC_PREFIX) };
}

/**
 * How the transactional producer's client retries: from 10 ms, doubling, then every second (about
 * 50 s in all, as the other clients: CLIENT_RETRY, and capped at 1 s for the same reason). A transaction begun right
 * after the previous commit is refused with CONCURRENT_TRANSACTIONS until the broker has written the
 * previous one's markers, a few milliseconds; kafkajs waits its client's retry time before trying
 * again, and at the 200 ms of the other clients that made a 200–300 ms latency tail at moderate rates,
 * where transactions follow each other. The Java producer retries this case after
 * 20 ms for the same reason. It needs a client of its own: kafkajs's transaction steps retry with
 * the client's settings, not the producer's.
 */
const TRANSACTION_RETRY = { initialRetryTime: 10, maxRetryTime: 1000, retries: 56 };

export interface ExactlyOnceStage {
  /** Names the partitions' transactional ids: `<prefix><stage>-p<N>`. */
  stage: TransactionalStage;
  prefix: string;
  groupId: string;
  /** The input topic whose partitions are fenced in one by one. */
  topic: string;
  onAcquired?: (partition: number) => Promise<void>;
  onReleased?: (partition: number) => void;
  onFence?: (partition: number) => void;
  /**
   * Positions committed as records of the stage's transactions in `topic` (position-log.ts) rather
   * than as the group's offsets, which `groupOffsets` then commits behind them.
   */
  positions?: { topic: string; codec: AvroCodec; groupOffsets: GroupOffsetCommitter };
}

/**
 * For the exactly-once stages (fan-out, audiences): one transactional producer per input partition,
 * fenced in before the partition is processed (PartitionTransactions). Given up on shutdown after
 * the consumer stopped (register it before the consumer: shutdown runs in reverse order).
 */
export async function startPartitionTransactions(runtime: ServiceRuntime, config: PipelineSettings, stage: ExactlyOnceStage): Promise<PartitionTransactions> {
  const txnKafka = createKafka({ brokers: config.KAFKA_BROKERS, clientId: `switchyard-${runtime.service}-txn`, logger: runtime.logger, security: config, overrides: { retry: TRANSACTION_RETRY } });
  const admin = txnKafka.admin();
  await connectClient(runtime.lifecycle, 'offsets-admin', admin);
  let positions: PartitionTransactionsOptions['positions'];
  if (stage.positions) {
    const source = kafkajsPartitionSource(txnKafka, stage.positions.topic);
    runtime.lifecycle.onShutdown('positions-reader', () => source.close());
    const log = new PositionLog({ topic: stage.positions.topic, inputTopic: stage.topic, source, codec: stage.positions.codec, clock: Date.now });
    positions = { log, groupOffsets: stage.positions.groupOffsets };
  }
  const transactions = new PartitionTransactions({
    groupId: stage.groupId,
    topic: stage.topic,
    createProducer: (partition) => createProducer(txnKafka, { transactionalId: partitionTransactionalId(stage.prefix, stage.stage, partition) }),
    committedOffset: committedOffsetReader(admin, stage.groupId, stage.topic),
    ...(stage.onAcquired ? { onAcquired: stage.onAcquired } : {}),
    ...(stage.onReleased ? { onReleased: stage.onReleased } : {}),
    ...(stage.onFence ? { onFence: stage.onFence } : {}),
    ...(positions ? { positions } : {}),
    logger: runtime.logger,
  });
  runtime.lifecycle.onShutdown('partition-transactions', () => transactions.close());
  return transactions;
}

/**
 * The configuration view of a service that needs it before it can do anything: reads the config
 * topic to its end (the service is not ready until then), follows it, and stops on shutdown.
 */
export async function startConfigView(runtime: ServiceRuntime, { kafka, codec, topics }: Pick<PipelineClients, 'kafka' | 'codec' | 'topics'>): Promise<ConfigView> {
  const view = new ConfigView({ kafka, codec, topic: topics.config, logger: runtime.logger, owner: runtime.service });
  runtime.readiness.set('config', false);
  await view.start();
  runtime.lifecycle.onShutdown('config-view', () => view.stop());
  runtime.readiness.set('config', true);
  return view;
}
