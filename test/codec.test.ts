// The Avro codec against the real schema registry and a real topic.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { AvroCodec, type AvroRecordTypes } from '@switchyard/platform/codec/avro-codec';
import { createSchemaRegistry } from '@switchyard/platform/codec/registry-connection';
import { registerSubject } from '@switchyard/platform/codec/schema-registration';
import { CodecError, RegistryUnavailableError } from '@switchyard/platform/errors';
import { freePort } from '../tools/stack/ports.js';
import { ensureTopics } from '@switchyard/platform/kafka/admin';
import { createProducer } from '@switchyard/platform/kafka/client';
import { topicDeclarations, topicNames } from '@switchyard/platform/kafka/topics';
import { avroSchemas } from '@switchyard/platform/schemas/generated';
import { testKafka, testStack, uniquePrefix } from './support/stack.js';

const now = Date.UTC(2026, 10, 22, 10, 0, 0, 123);
const base = {
  sourceId: 'src_1', userId: 'user-ü-1', anonymousId: null, timestamp: now - 5, originalTimestamp: now - 7, sentAt: now - 2, receivedAt: now,
  context: JSON.stringify({ ip: '203.0.113.9', library: { name: 'analytics-node', version: '3.1.0' } }), integrations: JSON.stringify({ All: true }),
};
const samples: { [K in keyof AvroRecordTypes as K extends `io.switchyard.event.${string}` ? K : never]: AvroRecordTypes[K] } = {
  'io.switchyard.event.Track': { ...base, messageId: randomUUID(), event: 'Order Completed', properties: JSON.stringify({ revenue: 9.99, currency: 'EUR' }) },
  'io.switchyard.event.Page': { ...base, messageId: randomUUID(), name: 'Pricing', category: 'Docs', properties: JSON.stringify({ path: '/pricing', url: 'https://x.test/pricing' }) },
  'io.switchyard.event.Screen': { ...base, messageId: randomUUID(), name: 'Home', category: null, properties: null },
  'io.switchyard.event.Identify': { ...base, messageId: randomUUID(), userId: null, anonymousId: 'anon-1', traits: JSON.stringify({ email: 'a@example.com', name: '山田' }) },
  'io.switchyard.event.Group': { ...base, messageId: randomUUID(), groupId: 'g-1', traits: JSON.stringify({ plan: 'pro' }) },
  'io.switchyard.event.Alias': { ...base, messageId: randomUUID(), previousId: 'anon-1' },
  'io.switchyard.event.Delete': { ...base, messageId: randomUUID(), context: null, integrations: null, requestId: 'del-1' },
};

describe('Avro codec through the real registry', () => {
  const { registryUrl } = testStack();
  const kafka = testKafka('codec');
  const prefix = uniquePrefix('codec');
  const topic = topicNames(prefix).ingest;
  const admin = kafka.admin();
  const producer = createProducer(kafka);
  const codec = new AvroCodec({ registryUrl });

  before(async () => {
    await Promise.all([admin.connect(), producer.connect()]);
    await ensureTopics(admin, topicDeclarations({ prefix, partitions: 3, retryTiers: 1 }).filter((d) => d.name === topic));
    await codec.register();
  });
  after(async () => { await Promise.all([admin.disconnect(), producer.disconnect()]); });

  it('round-trips all seven event types: produce, consume, decode, equal', async () => {
    const names = Object.keys(samples) as Array<keyof typeof samples>;
    await producer.send({
      topic, acks: -1,
      messages: names.map((name) => ({ key: `src_1:${samples[name].userId ?? samples[name].anonymousId}`, value: codec.encode(name, samples[name] as never) })),
    });

    // A second process's view: a fresh codec that registered nothing and must fetch ids from the registry.
    const reader = new AvroCodec({ registryUrl });
    const consumer = kafka.consumer({ groupId: `${prefix}reader` });
    await consumer.connect();
    await consumer.subscribe({ topic, fromBeginning: true });
    const decoded = new Map<string, unknown>();
    await new Promise<void>((resolve, reject) => {
      void consumer.run({
        eachMessage: async ({ message }) => {
          const record = await reader.decode(message.value);
          decoded.set(record.name, { ...record.value });
          if (decoded.size === names.length) resolve();
        },
      }).catch(reject);
    });
    await consumer.disconnect();
    for (const name of names) assert.deepEqual(decoded.get(name), samples[name], name);
  });

  it('an unknown schema id (once the registry has said so for a while) and a non-Avro value are refused with codes', async () => {
    const fresh = new AvroCodec({ registryUrl, notFoundConfirmMs: 300 });
    const unknownId = Buffer.from([0, 0x7f, 0xff, 0xff, 0xf0, 2, 3]);
    // A registry that has just started answers 404 for ids it has: the first "not found" is asked again.
    await assert.rejects(fresh.decode(unknownId), (e: unknown) => e instanceof RegistryUnavailableError);
    await sleep(350);
    await assert.rejects(fresh.decode(unknownId), (e: unknown) => e instanceof CodecError && e.code === 'CODEC_UNKNOWN_SCHEMA');
    await assert.rejects(codec.decode(Buffer.from('{"type":"track"}')), (e: unknown) => e instanceof CodecError && e.code === 'CODEC_BAD_FRAME');
  });

  it('a registry that does not answer is not an unknown schema: the record is to be read again, not set aside', async () => {
    const id = codec.schemaId('io.switchyard.event.Track');
    const record = codec.encode('io.switchyard.event.Track', samples['io.switchyard.event.Track']);
    // Nothing listens there (a registry restarting): the client's own retries end in a refused connection.
    const away = new AvroCodec({ registryUrl: `http://127.0.0.1:${await freePort()}/apis/ccompat/v7` });
    await assert.rejects(away.decode(record), (e: unknown) => e instanceof RegistryUnavailableError && e.code === 'REGISTRY_UNAVAILABLE' && e.retriable && e.message.includes(`schema id ${id}`));
  });

  it('encoding a value that does not fit the schema fails with the field named', () => {
    assert.throws(() => codec.encode('io.switchyard.event.Track', { ...samples['io.switchyard.event.Track'], event: 42 } as never), (e: unknown) => e instanceof CodecError && e.code === 'CODEC_ENCODE');
    assert.deepEqual(codec.invalidPaths('io.switchyard.event.Track', { ...samples['io.switchyard.event.Track'], event: 42 }), ['event']);
  });

  it('the registry refuses an incompatible change to a registered schema (BACKWARD)', async () => {
    const subject = 'io.switchyard.event.Track';
    const original = avroSchemas[subject];
    // A new required field without a default cannot read records written with the current schema.
    const incompatible = { ...original, fields: [...original.fields, { name: 'mustHave', type: 'string' }] };
    const res = await fetch(`${registryUrl}/subjects/${subject}/versions`, {
      method: 'POST', headers: { 'content-type': 'application/vnd.schemaregistry.v1+json' }, body: JSON.stringify({ schema: JSON.stringify(incompatible) }),
    });
    assert.equal(res.status, 409, await res.text());
    const sameViaClient = codec.registry.register({ type: 'AVRO' as never, schema: JSON.stringify(incompatible) }, { subject });
    await assert.rejects(sameViaClient);

    // The same change with a default is compatible; checked without registering it.
    const compatible = { ...original, fields: [...original.fields, { name: 'optional', type: ['null', 'string'], default: null }] };
    const check = await fetch(`${registryUrl}/compatibility/subjects/${subject}/versions/latest`, {
      method: 'POST', headers: { 'content-type': 'application/vnd.schemaregistry.v1+json' }, body: JSON.stringify({ schema: JSON.stringify(compatible) }),
    });
    assert.equal(check.status, 200);
    assert.equal((await check.json() as { is_compatible: boolean }).is_compatible, true);
  });

  it('processes registering a new subject at once all succeed, and the subject ends BACKWARD (a cold start of concurrent setups)', async () => {
    // Staggered starts hit the client library's window between registering and setting the rule.
    const failures: string[] = [];
    const { registry, put } = createSchemaRegistry({ registryUrl });
    const schema = JSON.stringify({ type: 'record', name: 'Race', namespace: 'io.switchyard.test', fields: [{ name: 'a', type: 'string' }] });
    for (let round = 0; round < 12; round++) {
      const subject = `io.switchyard.test.race-${randomUUID()}`;
      const results = await Promise.allSettled(Array.from({ length: 6 }, async (_, i) => {
        await new Promise((r) => setTimeout(r, i * (round % 6) * 3));
        return registerSubject(registry, put, subject, schema);
      }));
      const ids = new Set<number>();
      for (const r of results) if (r.status === 'rejected') failures.push((r.reason as Error).message); else ids.add(r.value.id);
      assert.ok(ids.size <= 1, 'one id for one schema');
      const config = await (await fetch(`${registryUrl}/config/${subject}`)).json() as { compatibilityLevel: string };
      assert.equal(config.compatibilityLevel, 'BACKWARD', subject);
    }
    assert.deepEqual(failures, []);
  });
});
