/**
 * Which offset a partition may commit while many of its records are in flight and finish in any
 * order (docs/decisions/0007-delivery-concurrency-and-offsets.md; the idea of Redpanda Connect's
 * ordered reader). Kafka's committed offset is the next one to read, so it may only move to just
 * past the highest record whose predecessors are all finished: a crash then re-reads every
 * unfinished record (at-least-once).
 *
 * Offsets are int64 strings, compared as BigInt; they increase but may skip (compaction,
 * transaction markers). Every operation is O(1) amortised: pending records sit in a FIFO in offset
 * order, a finished one is flagged in place, and flagged records are popped from the front.
 */
type Entry = { offset: bigint; done: boolean };

export class OffsetTracker {
  private queue: Entry[] = [];
  private head = 0;
  private readonly pending = new Map<bigint, Entry>();
  private lastTracked: bigint | undefined;
  private next: bigint | undefined;

  /** A record of this offset starts; offsets must increase (after a seek back, reset() first). */
  track(offset: string): void {
    const o = BigInt(offset);
    if (this.lastTracked !== undefined && o <= this.lastTracked) {
      throw new RangeError(`offset ${offset} tracked after ${this.lastTracked}: offsets must increase (reset() after a seek)`);
    }
    this.lastTracked = o;
    const entry = { offset: o, done: false };
    this.queue.push(entry);
    this.pending.set(o, entry);
  }

  /**
   * The record of this offset is finished (delivered, retried or dead-lettered). Returns false
   * when it was not pending — finished twice, or tracked before a reset — which is harmless.
   */
  complete(offset: string): boolean {
    const entry = this.pending.get(BigInt(offset));
    if (!entry) return false;
    this.pending.delete(entry.offset);
    entry.done = true;
    while (this.head < this.queue.length && this.queue[this.head]!.done) {
      this.next = this.queue[this.head]!.offset + 1n;
      this.head++;
    }
    // Drop the popped prefix now and then, so the array does not grow without bound.
    if (this.head > 1024 && this.head * 2 > this.queue.length) {
      this.queue = this.queue.slice(this.head);
      this.head = 0;
    }
    return true;
  }

  /** The offset to commit (next to read), or undefined while nothing has finished in order. */
  committable(): string | undefined {
    return this.next?.toString();
  }

  inFlight(): number {
    return this.pending.size;
  }

  /** The record that holds the commit back; the front of the queue is never a finished one. */
  oldestPending(): string | undefined {
    return this.queue[this.head]?.offset.toString();
  }

  /** Just past the last record tracked (the next to read), or undefined while none was. */
  readPosition(): string | undefined {
    return this.lastTracked === undefined ? undefined : (this.lastTracked + 1n).toString();
  }

  /** Forget everything: after a seek, or when the partition is reassigned. */
  reset(): void {
    this.queue = [];
    this.head = 0;
    this.pending.clear();
    this.lastTracked = undefined;
    this.next = undefined;
  }
}

export type TopicPartitionOffset = { topic: string; partition: number; offset: string };

/** One tracker per assigned partition, and which of their offsets are worth committing. */
export class PartitionOffsets {
  private readonly partitions = new Map<string, { topic: string; partition: number; tracker: OffsetTracker; committed: bigint | undefined }>();

  tracker(topic: string, partition: number): OffsetTracker {
    const key = `${topic}:${partition}`;
    let p = this.partitions.get(key);
    if (!p) {
      p = { topic, partition, tracker: new OffsetTracker(), committed: undefined };
      this.partitions.set(key, p);
    }
    return p.tracker;
  }

  /** Partitions whose committable offset moved past what markCommitted last recorded. */
  committableOffsets(): TopicPartitionOffset[] {
    const out: TopicPartitionOffset[] = [];
    for (const { topic, partition, tracker, committed } of this.partitions.values()) {
      const offset = tracker.committable();
      // Only forward: committing a lower offset would re-deliver what is already done.
      if (offset !== undefined && (committed === undefined || BigInt(offset) > committed)) out.push({ topic, partition, offset });
    }
    return out;
  }

  /** Records a successful commit; partitions dropped meanwhile are ignored. */
  markCommitted(list: readonly TopicPartitionOffset[]): void {
    for (const { topic, partition, offset } of list) {
      const p = this.partitions.get(`${topic}:${partition}`);
      if (!p) continue;
      const o = BigInt(offset);
      if (p.committed === undefined || o > p.committed) p.committed = o;
    }
  }

  /**
   * Where a partition kept across a rebalance must be read again from: its oldest unfinished record,
   * else just past the last finished one; undefined when nothing was read from it.
   */
  resumePoint(topic: string, partition: number): string | undefined {
    const tracker = this.partitions.get(`${topic}:${partition}`)?.tracker;
    return tracker?.oldestPending() ?? tracker?.committable();
  }

  /**
   * After a rebalance the consumer reads every partition again from its committed offset (or the
   * resume point the consumer seeks to): all
   * tracking starts over, and completions of records still in flight no longer count.
   */
  clear(): void {
    this.partitions.clear();
  }

  /** A revoked partition: its in-flight records may finish, but they no longer count. */
  drop(topic: string, partition: number): void {
    this.partitions.delete(`${topic}:${partition}`);
  }

  /** Partitions kept (keys `topic:partition`) go on as they were; every other one is dropped. */
  retainOnly(kept: ReadonlySet<string>): void {
    for (const key of [...this.partitions.keys()]) if (!kept.has(key)) this.partitions.delete(key);
  }

  /** Records tracked and not yet complete, over every partition. */
  inFlight(): number {
    let n = 0;
    for (const { tracker } of this.partitions.values()) n += tracker.inFlight();
    return n;
  }

  /** Where a partition kept by the same member goes on reading: just past its last tracked record. */
  readPosition(topic: string, partition: number): string | undefined {
    return this.partitions.get(`${topic}:${partition}`)?.tracker.readPosition();
  }
}
