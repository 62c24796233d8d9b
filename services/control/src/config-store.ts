import type { AvroCodec } from '@switchyard/platform/codec/avro-codec';
import { configKey, type AdminToken, type Audience, type ComputedTrait, type ConfigRecord, type Destination, type Source } from '@switchyard/platform/config-view/config-state';
import type { ConfigView } from '@switchyard/platform/config-view/config-view';
import type { Producer } from '@switchyard/platform/kafka/client';

export type ConfigChange = { key: string; record: ConfigRecord | null };

export const change = {
  putSource: (value: Source): ConfigChange => ({ key: configKey.source(value.id), record: { kind: 'source', value } }),
  deleteSource: (id: string): ConfigChange => ({ key: configKey.source(id), record: null }),
  putDestination: (value: Destination): ConfigChange => ({ key: configKey.destination(value.id), record: { kind: 'destination', value } }),
  deleteDestination: (id: string): ConfigChange => ({ key: configKey.destination(id), record: null }),
  putAudience: (value: Audience): ConfigChange => ({ key: configKey.audience(value.id), record: { kind: 'audience', value } }),
  deleteAudience: (id: string): ConfigChange => ({ key: configKey.audience(id), record: null }),
  putComputedTrait: (value: ComputedTrait): ConfigChange => ({ key: configKey.computedTrait(value.id), record: { kind: 'computed-trait', value } }),
  deleteComputedTrait: (id: string): ConfigChange => ({ key: configKey.computedTrait(id), record: null }),
  putAdminToken: (value: AdminToken): ConfigChange => ({ key: configKey.adminToken(value.id), record: { kind: 'admin-token', value } }),
  deleteAdminToken: (id: string): ConfigChange => ({ key: configKey.adminToken(id), record: null }),
};

const schemaOf = {
  source: 'io.switchyard.config.Source',
  destination: 'io.switchyard.config.Destination',
  audience: 'io.switchyard.config.Audience',
  'computed-trait': 'io.switchyard.config.ComputedTrait',
  'admin-token': 'io.switchyard.config.AdminToken',
} as const;

/**
 * Writes configuration changes to the compacted config topic (acks=all; a delete is a tombstone)
 * and applies them to this process's view once Kafka acknowledged them. The topic is the only
 * store: the control service keeps nothing else.
 */
export class ConfigStore {
  constructor(private readonly deps: { producer: Producer; codec: AvroCodec; topic: string; view: ConfigView }) {}

  /** Writes changes in one request, in order (they share the single partition of the topic). */
  async write(...changes: ConfigChange[]): Promise<void> {
    const { producer, codec, topic, view } = this.deps;
    const messages = changes.map(({ key, record }) => ({
      key,
      value: record === null ? null : codec.encode(schemaOf[record.kind], record.value as never),
    }));
    const [meta] = await producer.send({ topic, acks: -1, messages });
    const base = BigInt(meta?.baseOffset ?? '0');
    changes.forEach(({ key, record }, i) => view.applyWritten(key, record, String(base + BigInt(i))));
  }
}
