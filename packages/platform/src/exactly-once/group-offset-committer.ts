import type { Logger } from '../logger.js';

export interface TopicPartitionOffset {
  topic: string;
  partition: number;
  /** The next offset to read. */
  offset: string;
}

export interface GroupOffsetCommitterOptions {
  /** The input topic. */
  topic: string;
  /** The consumer's own commit (kafkajs consumer.commitOffsets): under its group generation. */
  commit: (offsets: TopicPartitionOffset[]) => Promise<void>;
  intervalMs: number;
  logger: Logger;
}

/**
 * The consumer group's offsets of a stage whose positions are committed elsewhere (a position log,
 * in its transactions): what lag monitors and autoscalers read. Only positions already committed
 * are noted, the latest per partition, and written together once per interval, off the path of the
 * transactions. A commit that fails (a rebalance) is tried again with the next one, for the
 * partitions still assigned; the group's offset is a hint to where a consumer starts, never
 * ahead of the position log, so a lost commit costs records skipped again, never records.
 */
export class GroupOffsetCommitter {
  private readonly pending = new Map<number, bigint>();
  private assigned: Set<number> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private inFlight: Promise<void> | undefined;

  constructor(private readonly opts: GroupOffsetCommitterOptions) {}

  start(): void {
    this.timer ??= setInterval(() => void this.flush(), this.opts.intervalMs).unref();
  }

  /** `partition`'s committed position is now `next`. */
  note(partition: number, next: bigint): void {
    const known = this.pending.get(partition);
    if (known === undefined || next > known) this.pending.set(partition, next);
  }

  /** The partitions the group now assigns: others' offsets are their new owners' to commit. */
  retain(partitions: readonly number[]): void {
    this.assigned = new Set(partitions);
    for (const p of this.pending.keys()) if (!this.assigned.has(p)) this.pending.delete(p);
  }

  /** Commits what was noted since the last commit; one commit at a time. */
  flush(): Promise<void> {
    if (this.inFlight || this.pending.size === 0) return this.inFlight ?? Promise.resolve();
    const offsets = [...this.pending].map(([partition, next]) => ({ topic: this.opts.topic, partition, offset: next.toString() }));
    this.pending.clear();
    const run = this.opts.commit(offsets).catch((err: unknown) => {
      this.opts.logger.debug({ err }, 'committing the group offsets failed; the next interval tries again');
      for (const { partition, offset } of offsets) if (!this.assigned || this.assigned.has(partition)) this.note(partition, BigInt(offset));
    });
    this.inFlight = run.finally(() => { this.inFlight = undefined; });
    return this.inFlight;
  }

  /** Stops the interval after a last commit (shutdown, before the consumer leaves its group). */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.inFlight;
    await this.flush();
  }
}
