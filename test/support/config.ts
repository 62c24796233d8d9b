// Writes sources and destinations straight to a pipeline's config topic, as the control service
// would, for suites that test other services.
import { randomBytes } from 'node:crypto';
import { AvroCodec } from '@switchyard/platform/codec/avro-codec';
import { configKey, type Destination, type Source } from '@switchyard/platform/config-view/config-state';
import { createProducer } from '@switchyard/platform/kafka/client';
import { topicNames } from '@switchyard/platform/kafka/topics';
import { registerSecretsIn } from './secrets.js';
import { testKafka, testStack } from './stack.js';

export function makeSource(overrides: Partial<Source> = {}): Source {
  const now = Date.now();
  const source = { id: `src_${randomBytes(6).toString('hex')}`, name: 'Test source', enabled: true, writeKeys: [randomBytes(24).toString('base64url')], createdAt: now, updatedAt: now, ...overrides };
  registerSecretsIn(source, 'makeSource');
  return source;
}

export function makeDestination(sourceId: string, overrides: Partial<Destination> = {}): Destination {
  const now = Date.now();
  const destination: Destination = {
    id: `dst_${randomBytes(6).toString('hex')}`, sourceId, name: 'Webhooks', type: 'webhooks', enabled: true, sharedSecret: null,
    webhooks: [{ url: 'https://hooks.example.com/in', headers: {}, clientCertificate: null }], createdAt: now, updatedAt: now, filter: null, standardSignatures: false, rateLimit: null, signingSecrets: [], retry: null, disabledReason: null, disabledAt: null, notificationTypes: [], ...overrides,
  };
  registerSecretsIn(destination, 'makeDestination');
  return destination;
}

export async function writeConfig(prefix: string, records: { sources?: Source[]; destinations?: Destination[]; deleteSources?: string[] }, brokers?: string): Promise<void> {
  const codec = new AvroCodec({ registryUrl: testStack().registryUrl });
  await codec.register(['io.switchyard.config.Source', 'io.switchyard.config.Destination']);
  const producer = createProducer(testKafka('config-writer', brokers));
  await producer.connect();
  try {
    await producer.send({
      topic: topicNames(prefix).config, acks: -1,
      messages: [
        ...(records.sources ?? []).map((s) => ({ key: configKey.source(s.id), value: codec.encode('io.switchyard.config.Source', s) })),
        ...(records.destinations ?? []).map((d) => ({ key: configKey.destination(d.id), value: codec.encode('io.switchyard.config.Destination', d) })),
        ...(records.deleteSources ?? []).map((id) => ({ key: configKey.source(id), value: null })),
      ],
    });
  } finally {
    await producer.disconnect();
  }
}
