import avro from 'avsc';
import { AvroCodec, type AvroSchemaName } from '@switchyard/platform/codec/avro-codec';
import { avroSchemas } from '@switchyard/platform/schemas/generated';

/** The schema registry as the codec sees it, kept in memory: ids by subject, and whether it answers. */
export interface OfflineRegistry {
  /** While false, a lookup of a writer schema the codec does not know yet fails as a refused connection does. */
  answering: boolean;
  /** Makes `id` a further writer id of `name`'s schema, known to the registry but not yet to the codec. */
  alias(id: number, name: AvroSchemaName): void;
}

/**
 * The real AvroCodec (Confluent framing, Avro bodies, schema resolution) over an in-memory registry:
 * every schema registered under ids 1, 2, … and no socket opened. An id the registry has never
 * heard of is answered 404 and, with no confirmation delay, read as an unknown schema at once.
 */
export async function offlineCodec(): Promise<{ codec: AvroCodec; registry: OfflineRegistry }> {
  const codec = new AvroCodec({ registryUrl: 'http://registry.invalid', notFoundConfirmMs: 0 });
  const ids = new Map<string, number>();
  const aliases = new Map<number, AvroSchemaName>();
  const registry: OfflineRegistry = { answering: true, alias: (id, name) => { aliases.set(id, name); } };
  Object.assign(codec.registry, {
    register: async (_schema: unknown, { subject }: { subject: string }) => {
      if (!ids.has(subject)) ids.set(subject, ids.size + 1);
      return { id: ids.get(subject)! };
    },
    getSchema: async (id: number) => {
      if (!registry.answering) throw new Error('connect ECONNREFUSED 127.0.0.1:1');
      const name = aliases.get(id);
      if (!name) throw Object.assign(new Error(`schema ${id} not found`), { status: 404 });
      return avro.Type.forSchema(avroSchemas[name] as unknown as avro.Schema);
    },
  });
  await codec.register();
  return { codec, registry };
}
