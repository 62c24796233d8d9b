import { EventEmitter } from 'node:events';
import type { AvroCodec } from '../codec/avro-codec.js';
import { RegistryUnavailableError } from '../errors.js';
import type { Kafka } from '../kafka/client.js';
import { GrouplessReader, type FetchedRecord, type PartitionSource } from '../kafka/groupless-reader.js';
import { kafkajsPartitionSource } from '../kafka/kafkajs-partition-source.js';
import type { Logger } from '../logger.js';
import { ConfigState, type ConfigRecord } from './config-state.js';

export interface ConfigViewOptions {
  kafka: Kafka;
  codec: AvroCodec;
  topic: string;
  logger: Logger;
  /** Names the view in log lines. */
  owner: string;
  /** Where records come from; by default the topic's partitions read straight from their leaders. */
  source?: PartitionSource;
}

/**
 * Follows the compacted config topic: reads it from the beginning at start (`start()` resolves once
 * every partition was read to an end offset learned after start began), then keeps applying changes
 * as they arrive, so every service sees a change within moments and without a restart. It reads
 * with no consumer group (GrouplessReader) and commits nothing: the topic is the state, and a broker
 * lost costs only the time until the partition has a leader again, never a group rebalance.
 * Emits 'change' after each applied batch.
 *
 * It knows how current it is (`currentAsOf`, `whenCurrent`): a caller about to refuse something
 * because the configuration does not know it (ingest, an unknown write key) first makes sure the
 * view holds every record written before the request arrived.
 */
export class ConfigView extends EventEmitter<{ change: [ConfigState] }> {
  readonly state = new ConfigState();
  private reader: GrouplessReader | undefined;
  private readonly log: Logger;
  /** Per key, the offset of a record this process wrote and applied before reading it back. */
  private readonly writtenOffsets = new Map<string, bigint>();

  constructor(private readonly opts: ConfigViewOptions) {
    super();
    this.log = opts.logger.child({ component: 'config-view' });
  }

  async start(): Promise<void> {
    const startedAt = Date.now();
    // Every record acknowledged before start: the end offsets of fetches sent from this millisecond on.
    const since = startedAt - 1;
    const reader = new GrouplessReader({
      source: this.opts.source ?? kafkajsPartitionSource(this.opts.kafka, this.opts.topic),
      logger: this.log,
      label: `config-view.${this.opts.owner}`,
      onRecords: (_partition, records) => this.applyRecords(records),
    });
    this.reader = reader;
    await reader.start();
    if (!(await reader.whenCurrent(since, Infinity))) throw new Error('the config view stopped before it had read the config topic');
    this.log.info({ sources: this.state.sources().length, destinations: this.state.destinations().length, ms: Date.now() - startedAt }, 'configuration loaded');
  }

  /** The time as of which the view holds every record of the config topic; undefined before start. */
  currentAsOf(): number | undefined {
    return this.reader?.currentAsOf();
  }

  /**
   * Resolves true once the view holds every record acknowledged by `since` (it read each partition
   * to an end offset learned in a later millisecond), false if not within timeoutMs: the view is behind
   * (a broker lost, the partition without a leader) and an unknown key may only be unknown to it.
   */
  whenCurrent(since: number, timeoutMs: number): Promise<boolean> {
    return this.reader ? this.reader.whenCurrent(since, timeoutMs) : Promise.resolve(false);
  }

  private async applyRecords(records: FetchedRecord[]): Promise<void> {
    for (const message of records) {
      const key = message.key?.toString('utf8') ?? '';
      const written = this.writtenOffsets.get(key);
      if (written !== undefined) {
        // Older records of a key this process already wrote would briefly undo its own write.
        if (BigInt(message.offset) < written) continue;
        this.writtenOffsets.delete(key);
      }
      const record = message.value ? await this.decode(key, message.value) : null;
      if (message.value && !record) continue;
      this.state.apply(key, record);
    }
    this.emit('change', this.state);
  }

  /**
   * Read-your-writes for the writer: applies a record this process just wrote (acknowledged at
   * `offset`) at once, instead of when the consumer reaches it.
   */
  applyWritten(key: string, record: ConfigRecord | null, offset: string): void {
    this.state.apply(key, record);
    this.writtenOffsets.set(key, BigInt(offset));
    this.emit('change', this.state);
  }

  /** Resolves when the predicate holds for the state (checked now and after every change). */
  waitFor(predicate: (state: ConfigState) => boolean, timeoutMs = 10_000): Promise<void> {
    if (predicate(this.state)) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const onChange = () => { if (predicate(this.state)) { cleanup(); resolve(); } };
      const timer = setTimeout(() => { cleanup(); reject(new Error(`configuration did not reach the expected state within ${timeoutMs} ms`)); }, timeoutMs);
      const cleanup = () => { clearTimeout(timer); this.off('change', onChange); };
      this.on('change', onChange);
    });
  }

  async stop(): Promise<void> {
    await this.reader?.stop();
  }

  private async decode(key: string, value: Buffer): Promise<ConfigRecord | null> {
    try {
      const decoded = await this.opts.codec.decode(value);
      if (decoded.name === 'io.switchyard.config.Source') return { kind: 'source', value: decoded.value };
      if (decoded.name === 'io.switchyard.config.Destination') return { kind: 'destination', value: decoded.value };
      if (decoded.name === 'io.switchyard.config.Audience') return { kind: 'audience', value: decoded.value };
      if (decoded.name === 'io.switchyard.config.ComputedTrait') return { kind: 'computed-trait', value: decoded.value };
      if (decoded.name === 'io.switchyard.config.AdminToken') return { kind: 'admin-token', value: decoded.value };
      this.log.error({ key, schema: decoded.name }, 'unexpected record type on the config topic; skipped');
    } catch (err) {
      if (err instanceof RegistryUnavailableError) throw err; // the reader fetches the records again
      this.log.error({ key, err }, 'undecodable config record; skipped');
    }
    return null;
  }
}
