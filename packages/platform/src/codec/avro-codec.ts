import avro from 'avsc';
import type { SchemaRegistry } from '@kafkajs/confluent-schema-registry';
import { classifyRegistryError } from '../connection-failures.js';
import { CodecError, RegistryUnavailableError } from '../errors.js';
import { failureWatch } from '../kafka/failure-watch.js';
import { avroSchemas, type AvroRecordTypes, type AvroSchemaName } from '../schemas/generated.js';
import { createSchemaRegistry, type RegistryConnection } from './registry-connection.js';
import { registerSubject, type RegistryPut } from './schema-registration.js';
import { frame, readFrame } from './wire-format.js';

export type { AvroRecordTypes, AvroSchemaName };

/** A decoded record: which schema it is (by full name) and its value. */
export type Decoded = { [N in AvroSchemaName]: { name: N; value: AvroRecordTypes[N]; schemaId: number } }[AvroSchemaName];

/** The registry's URL, credentials and CA: `registryConnection(config)` from a parsed config. */
export interface AvroCodecOptions extends RegistryConnection {
  /**
   * How long the registry must go on answering "not found" for a schema id before the id is taken
   * as unknown (default 5 s). Apicurio answers 404 for ids it has in the moment after it starts
   * listening, before it has read its journal (tools/repro/registry-restart-probe.ts).
   */
  notFoundConfirmMs?: number;
}

/** Ids being confirmed unknown, at most: garbage frames carry random ids, and this must not grow without end. */
const NOT_FOUND_TRACKED = 1000;

/**
 * Avro through the schema registry. Subjects follow RecordNameStrategy: the subject of a schema is
 * its full record name (io.switchyard.event.Track...), so one topic can carry several types and a
 * direct producer finds each by name. Schemas are registered at start-up (BACKWARD compatibility);
 * encoding is synchronous after that. Decoding resolves the writer's schema (fetched once per id)
 * to the schema this build knows, so older and newer producers are both read correctly.
 */
export class AvroCodec {
  readonly registry: SchemaRegistry;
  private readonly localTypes = new Map<AvroSchemaName, avro.Type>();
  private readonly idsByName = new Map<AvroSchemaName, number>();
  private readonly readers = new Map<number, { name: AvroSchemaName; type: avro.Type; resolver: avro.Resolver | undefined }>();

  private readonly put: RegistryPut;
  private readonly notFoundConfirmMs: number;
  /** Schema ids the registry answered "not found" for, and since when. */
  private readonly notFoundSince = new Map<number, number>();

  constructor({ notFoundConfirmMs = 5000, ...connection }: AvroCodecOptions) {
    this.notFoundConfirmMs = notFoundConfirmMs;
    ({ registry: this.registry, put: this.put } = createSchemaRegistry(connection));
    failureWatch.useRegistry(connection.registryUrl);
    for (const name of Object.keys(avroSchemas) as AvroSchemaName[]) {
      this.localTypes.set(name, avro.Type.forSchema(avroSchemas[name] as unknown as avro.Schema));
    }
  }

  /** Registers (idempotently) the given schemas, or all of them, and remembers their ids. */
  async register(names: readonly AvroSchemaName[] = Object.keys(avroSchemas) as AvroSchemaName[]): Promise<Map<AvroSchemaName, number>> {
    for (const name of names) {
      const { id } = await registerSubject(this.registry, this.put, name, JSON.stringify(avroSchemas[name]));
      this.idsByName.set(name, id);
      const type = this.localType(name);
      this.readers.set(id, { name, type, resolver: undefined });
    }
    return new Map(this.idsByName);
  }

  schemaId(name: AvroSchemaName): number {
    const id = this.idsByName.get(name);
    if (id === undefined) throw new CodecError('CODEC_ENCODE', `schema ${name} was not registered by this process`);
    return id;
  }

  encode<N extends AvroSchemaName>(name: N, value: AvroRecordTypes[N]): Buffer {
    const type = this.localType(name);
    let body: Buffer;
    try {
      body = type.toBuffer(value);
    } catch (err) {
      throw new CodecError('CODEC_ENCODE', `value is not a valid ${name}: ${(err as Error).message}`, err);
    }
    return frame(this.schemaId(name), body);
  }

  /** Checks a value against a schema without encoding; returns the paths of invalid fields. */
  invalidPaths<N extends AvroSchemaName>(name: N, value: unknown): string[] {
    const paths: string[] = [];
    this.localType(name).isValid(value, { errorHook: (path) => paths.push(path.join('.') || '(root)') });
    return paths;
  }

  /**
   * Throws CodecError for a record that cannot be read (bad frame, an id the registry has said for
   * `notFoundConfirmMs` it does not have, a body that does not decode), and RegistryUnavailableError
   * when the registry did not answer or has not yet confirmed an id unknown: that record is to be
   * read again later, not set aside.
   */
  async decode(value: Buffer | null | undefined): Promise<Decoded> {
    const { schemaId, body } = readFrame(value);
    const reader = this.readers.get(schemaId) ?? (await this.loadReader(schemaId));
    return this.decodeWith(reader, schemaId, body);
  }

  /**
   * decode() without waiting when the writer's schema is already known (every record after the
   * first of its schema id): undefined when it must first be fetched from the registry, and only
   * then does the caller await decode(). Spares a hot loop a promise and a microtask turn per
   * record. Throws as decode() does.
   */
  decodeKnown(value: Buffer | null | undefined): Decoded | undefined {
    const { schemaId, body } = readFrame(value);
    const reader = this.readers.get(schemaId);
    return reader ? this.decodeWith(reader, schemaId, body) : undefined;
  }

  private decodeWith(reader: { name: AvroSchemaName; type: avro.Type; resolver: avro.Resolver | undefined }, schemaId: number, body: Buffer): Decoded {
    try {
      const decoded = reader.resolver ? reader.type.fromBuffer(body, reader.resolver) : reader.type.fromBuffer(body);
      return { name: reader.name, value: decoded, schemaId } as Decoded;
    } catch (err) {
      throw new CodecError('CODEC_DECODE', `record with schema id ${schemaId} does not decode as ${reader.name}: ${(err as Error).message}`, err);
    }
  }

  private localType(name: AvroSchemaName): avro.Type {
    const type = this.localTypes.get(name);
    if (!type) throw new CodecError('CODEC_ENCODE', `unknown schema ${name}`);
    return type;
  }

  private async loadReader(schemaId: number) {
    let writer: avro.Type;
    try {
      writer = (await this.registry.getSchema(schemaId)) as unknown as avro.Type;
    } catch (err) {
      // Refused credentials or an untrusted certificate stop the service (failure-watch.ts).
      if (classifyRegistryError(err)?.fatal) failureWatch.registryError(err);
      // The client reports a refused connection as a response too (status 400): only a 404 is the
      // registry's own "no such id", and only once it has said so for a while.
      if ((err as { status?: unknown }).status !== 404) throw new RegistryUnavailableError(`schema id ${schemaId} could not be looked up: ${(err as Error).message}`, err);
      const now = Date.now();
      if (!this.notFoundSince.has(schemaId) && this.notFoundSince.size >= NOT_FOUND_TRACKED) this.notFoundSince.clear();
      const since = this.notFoundSince.get(schemaId) ?? now;
      this.notFoundSince.set(schemaId, since);
      if (now - since >= this.notFoundConfirmMs) throw new CodecError('CODEC_UNKNOWN_SCHEMA', `schema id ${schemaId} is not in the registry`, err);
      throw new RegistryUnavailableError(`schema id ${schemaId} not found yet; asked again before it is taken as unknown`, err);
    }
    this.notFoundSince.delete(schemaId);
    const name = writer.name as AvroSchemaName | undefined;
    if (!name || !this.localTypes.has(name)) {
      throw new CodecError('CODEC_UNKNOWN_SCHEMA', `schema id ${schemaId} is ${name ?? 'an unnamed type'}, which this build does not read`);
    }
    const type = this.localType(name);
    let resolver: avro.Resolver;
    try {
      resolver = type.createResolver(writer);
    } catch (err) {
      throw new CodecError('CODEC_UNKNOWN_SCHEMA', `schema id ${schemaId} (${name}) cannot be read with this build's schema: ${(err as Error).message}`, err);
    }
    const reader = { name, type, resolver };
    this.readers.set(schemaId, reader);
    return reader;
  }
}
