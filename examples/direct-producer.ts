// Writing calls to Switchyard's ingest topic from your own Kafka producer, without the HTTP API.
//
//   KAFKA_BROKERS=127.0.0.1:9092 SCHEMA_REGISTRY_URL=http://127.0.0.1:8085/apis/ccompat/v7 \
//   SOURCE_ID=demo npx tsx examples/direct-producer.ts
//
// The contract (see docs/tracking-api.md, "Producing directly to Kafka"):
// - topic `<prefix>ingest` (default `switchyard.ingest`);
// - value: Avro in the Confluent wire format, with the schema registered under the subject named
//   by the record's full name (`io.switchyard.event.Track`, `...Page`, `...Screen`, `...Identify`,
//   `...Group`, `...Alias`); fetch the latest version of that subject and encode with it;
// - key: `<sourceId>:<userId or anonymousId>` (UTF-8), partitioned with murmur2 (Java's and
//   kafkajs' default), so one user's calls stay in order with the ones that come over HTTP;
// - free-form objects (properties, traits, context, integrations) are JSON text;
// - times are epoch milliseconds; set receivedAt and timestamp (no skew correction happens here);
// - the rules of the HTTP API apply (userId or anonymousId, track event, at most 32 KB, …): fan-out
//   checks them and moves a record that breaks one to the invalid-events topic with the reason.
// This file uses kafkajs and the registry client directly, as an application would.
import { randomUUID } from 'node:crypto';
import { SchemaRegistry } from '@kafkajs/confluent-schema-registry';
import { Kafka, Partitioners } from 'kafkajs';

export interface DirectProducerOptions {
  brokers: string[];
  registryUrl: string;
  sourceId: string;
  topic?: string;
}

export async function produceTrack({ brokers, registryUrl, sourceId, topic = 'switchyard.ingest' }: DirectProducerOptions, userId: string, event: string, properties: Record<string, unknown>): Promise<string> {
  const registry = new SchemaRegistry({ host: registryUrl });
  const schemaId = await registry.getLatestSchemaId('io.switchyard.event.Track');
  const now = Date.now();
  const messageId = randomUUID();
  const record = {
    messageId, sourceId, userId, anonymousId: null,
    event, properties: JSON.stringify(properties),
    timestamp: now, originalTimestamp: now, sentAt: null, receivedAt: now,
    context: JSON.stringify({ library: { name: 'direct-producer-example', version: '1.0.0' } }), integrations: null,
  };
  const kafka = new Kafka({ clientId: 'direct-producer-example', brokers });
  const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1, createPartitioner: Partitioners.DefaultPartitioner });
  await producer.connect();
  try {
    await producer.send({ topic, acks: -1, messages: [{ key: `${sourceId}:${userId}`, value: await registry.encode(schemaId, record) }] });
  } finally {
    await producer.disconnect();
  }
  return messageId;
}

if (process.argv[1] && import.meta.url.endsWith(process.argv[1].split('/').pop()!)) {
  const messageId = await produceTrack(
    { brokers: (process.env.KAFKA_BROKERS ?? '127.0.0.1:9092').split(','), registryUrl: process.env.SCHEMA_REGISTRY_URL ?? 'http://127.0.0.1:8085/apis/ccompat/v7', sourceId: process.env.SOURCE_ID ?? 'demo', topic: process.env.INGEST_TOPIC },
    'direct-user-1', 'Order Completed', { revenue: 42 },
  );
  console.log(`produced track ${messageId}`);
}
