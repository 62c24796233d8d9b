import type { ReplayPartition, ReplayProgress } from '@switchyard/platform/schemas/generated';

/** Offsets of one ingest partition: at `from`, at `to`, and the oldest still retained. */
export interface PartitionOffsets { partition: number; from: bigint; to: bigint; low: bigint; high: bigint }

/**
 * The range of each partition a replay reads: from the first record at or after `from` to the first
 * at or after `to` (exclusive). Kafka answers "no such record" with -1 (or the end): the end of the
 * log then. Pure: the offsets come from the admin API.
 */
export function planPartitions(offsets: readonly PartitionOffsets[]): ReplayPartition[] {
  return [...offsets].sort((a, b) => a.partition - b.partition).map((o) => {
    const start = o.from < 0n ? o.high : o.from;
    const end = o.to < 0n ? o.high : o.to < start ? start : o.to;
    return { partition: o.partition, start: Number(start), end: Number(end), next: Number(start), retainedFrom: null };
  });
}

/**
 * Whether the range may reach before the topic's retention on this partition: records were deleted
 * (low > 0) and the range starts at the first one left, so calls between `from` and that record's
 * time may be gone. Confirmed (and reported) when that record is read and is younger than `from`.
 */
export function mayBeTruncated(p: ReplayPartition, low: bigint): boolean {
  return low > 0n && BigInt(p.start) === low && p.end > p.start;
}

/** Records left to read. */
export function remaining(partitions: readonly ReplayPartition[]): number {
  return partitions.reduce((n, p) => n + Math.max(0, p.end - p.next), 0);
}

export const TERMINAL_STATES = ['done', 'cancelled', 'failed'] as const;
export function isTerminal(progress: Pick<ReplayProgress, 'state'> | undefined): boolean {
  return progress !== undefined && (TERMINAL_STATES as readonly string[]).includes(progress.state);
}

/**
 * How long to wait before reading on, so that `scanned` records over `elapsedMs` stay at or under
 * `rate` per second: the replay's bound, which keeps live traffic ahead of it.
 */
export function pauseFor(scanned: number, elapsedMs: number, rate: number): number {
  return Math.max(0, Math.ceil((scanned / rate) * 1000 - elapsedMs));
}

/** Records per transaction: about five commits a second at the replay's rate, 500 at most. */
export function chunkSize(rate: number): number {
  return Math.max(1, Math.min(500, Math.floor(rate / 5)));
}
