// What stack-level tests share: where the real broker and registry are (set by `npm test`, see
// tools/test.ts), a topic prefix of their own so suites never see each other's records, and
// Kafka clients through the shared library.
import { randomUUID } from 'node:crypto';
import { createKafka, type Kafka } from '@switchyard/platform/kafka/client';
import { createLogger } from '@switchyard/platform/logger';

export interface TestStack {
  brokers: string;
  registryUrl: string;
}

export function testStack(): TestStack {
  const brokers = process.env.KAFKA_BROKERS;
  const registryUrl = process.env.SCHEMA_REGISTRY_URL;
  if (!brokers || !registryUrl) {
    throw new Error('KAFKA_BROKERS and SCHEMA_REGISTRY_URL are not set: run the suite with `npm test` (it starts the real broker and registry)');
  }
  return { brokers, registryUrl };
}

/** A topic prefix no other test uses. */
export function uniquePrefix(label: string): string {
  return `t.${label}.${randomUUID().slice(0, 8)}.`;
}

export function testKafka(label: string, brokers = testStack().brokers): Kafka {
  return createKafka({ brokers: brokers.split(','), clientId: `test-${label}`, logger: createLogger({ service: `test-${label}`, level: 'error' }) });
}
