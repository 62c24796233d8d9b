import { AvroCodec, type AvroSchemaName } from './codec/avro-codec.js';
import { ConfigView } from './config-view/config-view.js';
import { createKafka, createProducer, type Kafka, type Producer } from './kafka/client.js';
import { connectClient } from './kafka/connect.js';
import { topicNames, type TopicNames } from './kafka/topics.js';
import type { ServiceRuntime } from './runtime.js';

export interface PipelineSettings {
  KAFKA_BROKERS: string[];
  SCHEMA_REGISTRY_URL: string;
  SWITCHYARD_TOPIC_PREFIX: string;
}

/** The Kafka side every pipeline service needs: a client, an idempotent producer, the codec with its schemas registered, the topic names. */
export interface PipelineClients {
  kafka: Kafka;
  producer: Producer;
  codec: AvroCodec;
  topics: TopicNames;
}

/** `transactionalId` makes the producer transactional (exactly-once stages). */
export async function connectPipeline(runtime: ServiceRuntime, config: PipelineSettings, schemas: readonly AvroSchemaName[], opts: { transactionalId?: string } = {}): Promise<PipelineClients> {
  const kafka = createKafka({ brokers: config.KAFKA_BROKERS, clientId: `switchyard-${runtime.service}`, logger: runtime.logger });
  const codec = new AvroCodec({ registryUrl: config.SCHEMA_REGISTRY_URL });
  runtime.readiness.set('schemas', false);
  const producer = createProducer(kafka, opts);
  await connectClient(runtime.lifecycle, 'producer', producer);
  await codec.register(schemas);
  runtime.readiness.set('schemas', true);
  return { kafka, producer, codec, topics: topicNames(config.SWITCHYARD_TOPIC_PREFIX) };
}

/**
 * The configuration view of a service that needs it before it can do anything: reads the config
 * topic to its end (the service is not ready until then), follows it, and stops on shutdown.
 */
export async function startConfigView(runtime: ServiceRuntime, { kafka, codec, topics }: PipelineClients): Promise<ConfigView> {
  const view = new ConfigView({ kafka, codec, topic: topics.config, logger: runtime.logger, owner: runtime.service });
  runtime.readiness.set('config', false);
  await view.start();
  runtime.lifecycle.onShutdown('config-view', () => view.stop());
  runtime.readiness.set('config', true);
  return view;
}
