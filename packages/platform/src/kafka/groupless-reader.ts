import { EventEmitter } from 'node:events';
import { setTimeout as sleepFor } from 'node:timers/promises';
import type { Logger } from '../logger.js';

/** One record as fetched, in offset order within its partition. */
export interface FetchedRecord {
  offset: string;
  key: Buffer | null;
  value: Buffer | null;
}

/** What one fetch of one partition returned. */
export interface FetchedPartition {
  /** Data records at or after the requested offset (control records and aborted ones left out). */
  records: FetchedRecord[];
  /** Where the next fetch starts: past every record and control record returned. */
  nextOffset: bigint;
  /** The partition's end as the leader answered: last stable offset (read_committed), else high watermark. */
  endOffset: bigint;
}

/** Raised by a PartitionSource when the requested offset is not in the log (truncated or deleted). */
export class OffsetOutOfRangeError extends Error {
  constructor(readonly partition: number, cause?: unknown) {
    super(`offset out of range on partition ${partition}`, { cause });
    this.name = 'OffsetOutOfRangeError';
  }
}

/**
 * The Kafka side of a GrouplessReader: fetches straight from each partition's leader, with no
 * consumer group (kafka/kafkajs-partition-source.ts). Passed in, so the reader is tested without a broker.
 */
export interface PartitionSource {
  partitions(): Promise<number[]>;
  earliestOffset(partition: number): Promise<bigint>;
  /** A long poll of `maxWaitMs` at most; throws OffsetOutOfRangeError or any other (retriable) error. */
  fetch(partition: number, offset: bigint, maxWaitMs: number): Promise<FetchedPartition>;
  /** After a failed fetch: drop what may be stale (metadata, the leader's connection). Never throws. */
  recover(error: unknown): Promise<void>;
  close(): Promise<void>;
}

export interface GrouplessReaderOptions {
  source: PartitionSource;
  logger: Logger;
  /** Names the reader in log lines. */
  label: string;
  /** Called once per fetch that returned records, in offset order per partition; awaited before the next fetch. */
  onRecords: (partition: number, records: FetchedRecord[]) => Promise<void>;
  /** Longest idle poll: an idle reader learns the partition end at least this often. */
  maxWaitMs?: number;
  /** After a failed fetch, wait from retryMinMs doubling up to retryMaxMs before the next one. */
  retryMinMs?: number;
  retryMaxMs?: number;
  /** How often to look for partitions added to the topic. */
  partitionCheckMs?: number;
  clock?: () => number;
  sleep?: (ms: number) => Promise<void>;
}

interface PartitionState {
  position: bigint;
  /** Send time of the last fetch after which position was at the partition's end (undefined: never yet). */
  currentAsOf: number | undefined;
  /** When the current run of failed fetches began. */
  failingSince: number | undefined;
}

interface Waiter { since: number; resolve: (current: boolean) => void; timer: NodeJS.Timeout | undefined }

export const READER_DEFAULTS = { maxWaitMs: 300, retryMinMs: 100, retryMaxMs: 2000, partitionCheckMs: 30_000 } as const;

/**
 * Reads every partition of a topic from its first record and keeps following it, without a
 * consumer group: no coordinator, no join, no session timeout and no rebalance, so losing a broker
 * costs only the time until the partition has a leader again. A failed fetch is followed by a
 * metadata refresh and a new try after 100 ms, doubling to 2 s. Commits nothing.
 *
 * It knows how current it is: each fetch answer carries the partition's end offset, so after a fetch
 * sent at time T that left the position at the end, the reader holds every record acknowledged
 * before T. `currentAsOf()` is the oldest such T over all partitions; `whenCurrent(since)` waits for
 * one after `since` (an idle reader polls every maxWaitMs, so that takes one or two polls).
 */
export class GrouplessReader extends EventEmitter<{ progress: [] }> {
  private readonly partitions = new Map<number, PartitionState>();
  private readonly loops: Array<Promise<void>> = [];
  private readonly waiters = new Set<Waiter>();
  private readonly maxWaitMs: number;
  private readonly retryMinMs: number;
  private readonly retryMaxMs: number;
  private readonly clock: () => number;
  private readonly sleep: (ms: number) => Promise<void>;
  private readonly abort = new AbortController();
  private running = false;
  private checkTimer: NodeJS.Timeout | undefined;

  constructor(private readonly opts: GrouplessReaderOptions) {
    super();
    this.maxWaitMs = opts.maxWaitMs ?? READER_DEFAULTS.maxWaitMs;
    this.retryMinMs = opts.retryMinMs ?? READER_DEFAULTS.retryMinMs;
    this.retryMaxMs = opts.retryMaxMs ?? READER_DEFAULTS.retryMaxMs;
    this.clock = opts.clock ?? Date.now;
    this.sleep = opts.sleep ?? ((ms) => sleepFor(ms, undefined, { signal: this.abort.signal }).catch(() => undefined));
  }

  /** Finds the partitions and starts following each; resolves without waiting for them to be read. */
  async start(): Promise<void> {
    this.running = true;
    await this.followNewPartitions();
    const check = () => {
      this.checkTimer = setTimeout(() => {
        this.followNewPartitions().catch((err: unknown) => this.opts.logger.warn({ err, reader: this.opts.label }, 'looking for new partitions failed')).finally(() => { if (this.running) check(); });
      }, this.opts.partitionCheckMs ?? READER_DEFAULTS.partitionCheckMs);
      this.checkTimer.unref();
    };
    check();
  }

  /** The oldest time as of which every partition was read to its end; undefined until each was once. */
  currentAsOf(): number | undefined {
    if (this.partitions.size === 0) return undefined;
    let oldest = Infinity;
    for (const p of this.partitions.values()) {
      if (p.currentAsOf === undefined) return undefined;
      oldest = Math.min(oldest, p.currentAsOf);
    }
    return oldest;
  }

  /**
   * Resolves true once the reader has read every partition to an end offset it learned after
   * `since` (a fetch sent in a later millisecond), false if that did not happen within timeoutMs
   * (or the reader stopped).
   */
  whenCurrent(since: number, timeoutMs: number): Promise<boolean> {
    if ((this.currentAsOf() ?? -Infinity) > since) return Promise.resolve(true);
    if (!this.running) return Promise.resolve(false);
    return new Promise((resolve) => {
      const waiter: Waiter = { since, resolve, timer: undefined };
      if (Number.isFinite(timeoutMs)) waiter.timer = setTimeout(() => this.settle(waiter, false), timeoutMs);
      this.waiters.add(waiter);
    });
  }

  async stop(): Promise<void> {
    this.running = false;
    clearTimeout(this.checkTimer);
    this.abort.abort();
    for (const waiter of [...this.waiters]) this.settle(waiter, false);
    // Closing the connections ends an idle poll at once instead of after maxWaitMs.
    await this.opts.source.close();
    await Promise.allSettled(this.loops);
  }

  private async followNewPartitions(): Promise<void> {
    for (const partition of await this.opts.source.partitions()) {
      if (this.partitions.has(partition) || !this.running) continue;
      const state: PartitionState = { position: -1n, currentAsOf: undefined, failingSince: undefined };
      this.partitions.set(partition, state);
      this.loops.push(this.follow(partition, state));
    }
  }

  private async follow(partition: number, state: PartitionState): Promise<void> {
    const { source, logger, label } = this.opts;
    let retryMs = this.retryMinMs;
    while (this.running) {
      try {
        if (state.position < 0n) state.position = await source.earliestOffset(partition);
        const sentAt = this.clock();
        const fetched = await source.fetch(partition, state.position, this.maxWaitMs);
        if (!this.running) return;
        if (fetched.records.length > 0) await this.opts.onRecords(partition, fetched.records);
        const moved = fetched.nextOffset > state.position;
        if (moved) state.position = fetched.nextOffset;
        if (state.failingSince !== undefined) {
          logger.info({ reader: label, partition, failedForMs: this.clock() - state.failingSince }, 'reading again after failed fetches');
          state.failingSince = undefined;
        }
        retryMs = this.retryMinMs;
        if (state.position >= fetched.endOffset) {
          state.currentAsOf = sentAt;
          this.progressed();
        } else if (!moved) {
          // Behind the end yet nothing to read past (records below the position only): do not spin.
          await this.sleep(this.retryMinMs);
        }
      } catch (err) {
        if (!this.running) return;
        if (err instanceof OffsetOutOfRangeError) {
          logger.warn({ reader: label, partition, position: String(state.position) }, 'position no longer in the log; reading again from the first record');
          state.position = -1n;
          continue;
        }
        if (state.failingSince === undefined) {
          state.failingSince = this.clock();
          logger.warn({ err, reader: label, partition }, 'fetch failed; refreshing metadata and retrying');
        }
        await source.recover(err);
        await this.sleep(retryMs);
        retryMs = Math.min(retryMs * 2, this.retryMaxMs);
      }
    }
  }

  private progressed(): void {
    const asOf = this.currentAsOf();
    if (asOf !== undefined) for (const waiter of [...this.waiters]) if (asOf > waiter.since) this.settle(waiter, true);
    this.emit('progress');
  }

  private settle(waiter: Waiter, current: boolean): void {
    if (!this.waiters.delete(waiter)) return;
    clearTimeout(waiter.timer);
    waiter.resolve(current);
  }
}
