import type { Logger } from '@switchyard/platform/logger';
import { TokenBucket } from './token-bucket.js';

/**
 * Destination rate limits on one delivery instance (docs/decisions/0018-destination-rate-limits.md).
 * A destination's tasks are spread over every delivery partition, so every instance sends to it;
 * each allows its share of the limit, its partitions over all of them, and the shares add up to
 * at most the limit without any instance talking to another.
 */

/**
 * Burst allowance per instance, in seconds of its rate (at least one request): what an idle
 * destination may get at once. Three instances' bursts add up to a tenth of a second of the limit.
 */
export const BURST_SECONDS = 0.1;
/**
 * How far ahead a task read from a partition may reserve its token and wait in memory: its offset
 * stays unfinished meanwhile, and a crash re-sends what finished behind it on that partition.
 */
export const WAIT_IN_MEMORY_MS = 1000;
/** A reserved request that could not go within this of its time (a rebalance, no slot) reserves again. */
export const LATE_MS = 250;

/**
 * This instance's share of every destination's limit: the delivery partitions it holds over all
 * delivery partitions, counting the delivery topic and every retry tier alike (`assigned` are
 * `topic:partition` keys; `partitions` the count of each topic that counts). With DELIVERY_READS
 * split, the main group holds the delivery topic's share and the retries group the tiers'.
 */
export function rateShare(assigned: Iterable<string>, partitions: ReadonlyMap<string, number>): number {
  let total = 0;
  for (const count of partitions.values()) total += count;
  if (total === 0) return 0;
  let held = 0;
  for (const key of assigned) {
    const topic = key.slice(0, key.lastIndexOf(':'));
    const partition = Number(key.slice(key.lastIndexOf(':') + 1));
    const count = partitions.get(topic);
    if (count !== undefined && partition < count) held++;
  }
  return Math.min(1, held / total);
}

/** Requests a second this instance allows a destination limited to `perSecond`, and its burst. */
export function instanceRate(perSecond: number, share: number): { rate: number; capacity: number } {
  const rate = perSecond * share;
  return { rate, capacity: Math.max(1, rate * BURST_SECONDS) };
}

/** What a task of a rate-limited destination does now. */
export type RateDecision =
  | { action: 'send' }
  /** Its token comes at `at` (ms): it waits in memory until then. */
  | { action: 'wait'; at: number }
  /** No token within the wait allowed: set aside (a held range or task in the first tier), no attempt. */
  | { action: 'hold' };

export interface RateLimitsOptions {
  clock: () => number;
  /**
   * The partition count of each topic a share counts (read at start and at every assignment, since
   * setup may add partitions). Absent (unit tests), this instance is the only one: its share is the
   * whole limit.
   */
  shares?: { partitionCounts: () => Promise<Map<string, number>>; logger: Logger };
}

/** The token buckets of this instance's rate-limited destinations, at this instance's share. */
export class RateLimits {
  private share = 0;
  private partitionCounts = new Map<string, number>();
  private readonly buckets = new Map<string, { perSecond: number; bucket: TokenBucket }>();
  /** Tasks waiting in memory for their token, over all destinations (a gauge). */
  private waitingNow = 0;

  constructor(private readonly opts: RateLimitsOptions) {}

  get waiting(): number {
    return this.waitingNow;
  }

  /**
   * Reads the partition counts; before the first assignment, or this instance's share would be 0
   * and it would hold every rate-limited task it reads.
   */
  async readPartitionCounts(): Promise<void> {
    if (this.opts.shares) this.partitionCounts = await this.opts.shares.partitionCounts();
  }

  /**
   * A new assignment (`topic:partition` keys): the share at once with the counts known, then again
   * with fresh ones (setup may have added partitions, which only lowers a share) unless a later
   * assignment `superseded()` this one by then.
   */
  assigned(assigned: ReadonlySet<string>, superseded: () => boolean): void {
    const { shares } = this.opts;
    if (!shares) return this.setShare(1);
    this.setShare(rateShare(assigned, this.partitionCounts));
    shares.partitionCounts().then((counts) => {
      this.partitionCounts = counts;
      if (!superseded()) this.setShare(rateShare(assigned, counts));
    }, (err: unknown) => shares.logger.warn({ err }, 'could not read the partition counts: rate limit shares stay as they were'));
  }

  /** A new assignment: every bucket goes on at the new share (tokens reserved ahead stay reserved). */
  setShare(share: number): void {
    if (share === this.share) return;
    this.share = share;
    const now = this.opts.clock();
    for (const entry of this.buckets.values()) {
      const { rate, capacity } = instanceRate(entry.perSecond, share);
      entry.bucket.setRate(rate, capacity, now);
    }
  }

  /**
   * Whether a task of `destinationId`, limited to `perSecond`, goes now, waits until its reserved
   * token (at most `maxWaitMs`), or is held. A wait counts in `waiting` until waited() is called.
   */
  decide(destinationId: string, perSecond: number, maxWaitMs: number): RateDecision {
    const now = this.opts.clock();
    const at = this.bucket(destinationId, perSecond, now).reserve(now, maxWaitMs);
    if (at === undefined) return { action: 'hold' };
    if (at <= now) return { action: 'send' };
    this.waitingNow++;
    return { action: 'wait', at };
  }

  /** How long until a task of `destinationId`, limited to `perSecond`, would get a token (TokenBucket.tokenInMs); reserves nothing. */
  tokenInMs(destinationId: string, perSecond: number): number | undefined {
    const now = this.opts.clock();
    return this.bucket(destinationId, perSecond, now).tokenInMs(now);
  }

  /**
   * Takes the next token however far ahead it is, and says when it comes (undefined only for a
   * limit of 0): after tokenInMs, for a task admission sends or lets wait. A wait counts in
   * `waiting` until waited() is called.
   */
  take(destinationId: string, perSecond: number): number | undefined {
    const now = this.opts.clock();
    const at = this.bucket(destinationId, perSecond, now).reserve(now, Number.POSITIVE_INFINITY);
    if (at !== undefined && at > now) this.waitingNow++;
    return at;
  }

  /**
   * Reserves tokens for up to `n` tasks of a range, none further than `maxWaitMs` ahead: the time
   * of each (now for a token there already). A range takes its tokens at once, before it is read,
   * so ranges that fall due together divide the tokens instead of each being read for a few. A
   * wait for one of them counts in `waiting` from waitStarted() to waited().
   */
  reserveUpTo(destinationId: string, perSecond: number, n: number, maxWaitMs: number): number[] {
    const now = this.opts.clock();
    const bucket = this.bucket(destinationId, perSecond, now);
    const times: number[] = [];
    while (times.length < n) {
      const at = bucket.reserve(now, maxWaitMs);
      if (at === undefined) break;
      times.push(at);
    }
    return times;
  }

  /** A task began to wait for a token reserveUpTo gave it. */
  waitStarted(): void {
    this.waitingNow++;
  }

  /** Whether the next task of `destinationId` would be held (no token within `maxWaitMs`); reserves nothing. */
  wouldHold(destinationId: string, perSecond: number, maxWaitMs: number): boolean {
    const now = this.opts.clock();
    return !this.bucket(destinationId, perSecond, now).wouldGrant(now, maxWaitMs);
  }

  /** A task that waited for its token stopped waiting (sent, held or dropped). */
  waited(): void {
    this.waitingNow--;
  }

  private bucket(destinationId: string, perSecond: number, now: number): TokenBucket {
    let entry = this.buckets.get(destinationId);
    const { rate, capacity } = instanceRate(perSecond, this.share);
    if (!entry) {
      entry = { perSecond, bucket: new TokenBucket(rate, capacity, now) };
      this.buckets.set(destinationId, entry);
    } else if (entry.perSecond !== perSecond) {
      // The limit was changed: the new one applies from now, like a new share.
      entry.perSecond = perSecond;
      entry.bucket.setRate(rate, capacity, now);
    }
    return entry.bucket;
  }
}
