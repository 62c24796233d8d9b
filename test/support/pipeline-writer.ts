// Writes records into a test pipeline's topics as the upstream stages would: ingest events (as
// the ingest service does) and delivery tasks (as fan-out does).
import { randomUUID } from 'node:crypto';
import { AvroCodec, type AvroRecordTypes } from '@switchyard/platform/codec/avro-codec';
import { createProducer, type Producer } from '@switchyard/platform/kafka/client';
import { originHeaders } from '@switchyard/platform/kafka/record-origin';
import type { DeliveryTask } from '@switchyard/platform/schemas/generated';
import { testKafka, testStack } from './stack.js';

export type EventName = Extract<keyof AvroRecordTypes, `io.switchyard.event.${string}`>;
export const EVENT_TIME = Date.parse('2026-11-22T10:00:00.123Z');

export function event<N extends EventName>(name: N, fields: Partial<AvroRecordTypes[N]> & { sourceId: string }): AvroRecordTypes[N] {
  return {
    messageId: randomUUID(), userId: 'user-1', anonymousId: null, timestamp: EVENT_TIME, originalTimestamp: null, sentAt: null, receivedAt: EVENT_TIME + 5,
    context: null, integrations: null, ...fields,
  } as AvroRecordTypes[N];
}

export function task(destinationId: string, body: Record<string, unknown> = {}, overrides: Partial<DeliveryTask> = {}): DeliveryTask {
  const messageId = randomUUID();
  return {
    taskId: `${messageId}:${destinationId}`, messageId, sourceId: 'src_test', destinationId, eventType: 'track', userKey: 'user-1',
    body: JSON.stringify({ version: 1, type: 'track', messageId, userId: 'user-1', event: 'Test', properties: {}, timestamp: new Date().toISOString(), ...body }),
    receivedAt: Date.now(), createdAt: Date.now(), attempt: 0, firstAttemptAt: null, deadline: null, notBefore: null,
    pendingUrls: null, lastStatus: null, lastError: null, ...overrides,
  };
}

export class PipelineWriter {
  readonly codec = new AvroCodec({ registryUrl: testStack().registryUrl });
  private readonly producer: Producer;
  constructor(brokers?: string) { this.producer = createProducer(testKafka('pipeline-writer', brokers)); }
  async start(): Promise<this> { await this.codec.register(); await this.producer.connect(); return this; }

  /** Marked as ingest's (record-origin.ts), as the ingest service writes them: fan-out neither checks nor counts them. */
  async events(topic: string, ...events: Array<[EventName, AvroRecordTypes[EventName]]>): Promise<void> {
    await this.producer.send({ topic, acks: -1, messages: events.map(([name, v]) => ({ key: `${v.sourceId}:${v.userId ?? v.anonymousId}`, value: this.codec.encode(name, v as never), headers: originHeaders.ingest })) });
  }

  async tasks(topic: string, tasks: DeliveryTask[]): Promise<void> {
    for (let i = 0; i < tasks.length; i += 500) {
      await this.producer.send({ topic, acks: -1, messages: tasks.slice(i, i + 500).map((t) => ({ key: `${t.destinationId}:${t.userKey}`, value: this.codec.encode('io.switchyard.pipeline.DeliveryTask', t) })) });
    }
  }

  async raw(topic: string, key: string, value: Buffer): Promise<void> {
    await this.producer.send({ topic, acks: -1, messages: [{ key, value }] });
  }

  stop(): Promise<void> { return this.producer.disconnect(); }
}
