import { AvroCodec, type AvroSchemaName } from './codec/avro-codec.js';
import { ConfigView } from './config-view/config-view.js';
import { createKafka, createProducer, type Kafka, type Producer } from './kafka/client.js';
import { connectClient } from './kafka/connect.js';
import { topicNames, type TopicNames } from './kafka/topics.js';
import { TransactionalProducer } from './kafka/transaction.js';
import type { ServiceRuntime } from './runtime.js';

export interface PipelineSettings {
  KAFKA_BROKERS: string[];
  SCHEMA_REGISTRY_URL: string;
  SWITCHYARD_TOPIC_PREFIX: string;
}

/**
 * The Kafka side every pipeline service needs: a client, its producer (idempotent, or for an
 * exactly-once stage a TransactionalProducer), the codec with its schemas registered, the topic names.
 */
export interface PipelineClients<P = Producer> {
  kafka: Kafka;
  producer: P;
  codec: AvroCodec;
  topics: TopicNames;
}

export async function connectPipeline(runtime: ServiceRuntime, config: PipelineSettings, schemas: readonly AvroSchemaName[]): Promise<PipelineClients> {
  return connectWith(runtime, config, schemas, (kafka) => createProducer(kafka));
}

/**
 * How the transactional producer's client retries: from 10 ms, doubling, up to 10 s between tries
 * (about 50 s in all, as long as the other clients ride out an outage). A transaction begun right
 * after the previous commit is refused with CONCURRENT_TRANSACTIONS until the broker has written the
 * previous one's markers, a few milliseconds; kafkajs waits its client's retry time before trying
 * again, and at the 200 ms of the other clients that made a 200–300 ms latency tail at moderate rates,
 * where transactions follow each other (BENCHMARKS.md). The Java producer retries this case after
 * 20 ms for the same reason. It needs a client of its own: kafkajs's transaction steps retry with
 * the client's settings, not the producer's.
 */
const TRANSACTION_RETRY = { initialRetryTime: 10, maxRetryTime: 10_000, retries: 14 };

/** For the exactly-once stages: the producer is transactional under `transactionalId`, and replaced after a failed transaction. */
export async function connectTransactionalPipeline(runtime: ServiceRuntime, config: PipelineSettings, schemas: readonly AvroSchemaName[], transactionalId: string): Promise<PipelineClients<TransactionalProducer>> {
  const txnKafka = createKafka({ brokers: config.KAFKA_BROKERS, clientId: `switchyard-${runtime.service}-txn`, logger: runtime.logger, overrides: { retry: TRANSACTION_RETRY } });
  return connectWith(runtime, config, schemas, () => new TransactionalProducer(() => createProducer(txnKafka, { transactionalId }), runtime.logger));
}

async function connectWith<P extends { connect(): Promise<void>; disconnect(): Promise<void> }>(runtime: ServiceRuntime, config: PipelineSettings, schemas: readonly AvroSchemaName[], makeProducer: (kafka: Kafka) => P): Promise<PipelineClients<P>> {
  const kafka = createKafka({ brokers: config.KAFKA_BROKERS, clientId: `switchyard-${runtime.service}`, logger: runtime.logger });
  const codec = new AvroCodec({ registryUrl: config.SCHEMA_REGISTRY_URL });
  runtime.readiness.set('schemas', false);
  const producer = makeProducer(kafka);
  await connectClient(runtime.lifecycle, 'producer', producer);
  await codec.register(schemas);
  runtime.readiness.set('schemas', true);
  return { kafka, producer, codec, topics: topicNames(config.SWITCHYARD_TOPIC_PREFIX) };
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
