import type { ConsumerClient } from '@switchyard/platform/consuming/consumer-client';
import type { DeliveryMetrics } from './delivery-metrics.js';
import type { KeyedLimiter } from './in-flight-limits.js';
import type { StallDetector } from './stall-detector.js';

/** The blockedBy key of partitions waiting for deferral slots (no destination id is empty). */
export const DEFERRALS = '';

export interface PauseControlOptions {
  consumer: Pick<ConsumerClient, 'pause' | 'seek' | 'resume' | 'paused'>;
  metrics: Pick<DeliveryMetrics, 'waiting'>;
  clock: () => number;
  /** Which destinations have stopped answering (a full one of those has its overflow deferred). */
  stalls: StallDetector;
  /** Requests in flight to each destination, and tasks waiting for them. */
  perDestination: KeyedLimiter;
  /** Tasks of one destination waiting for its slots; beyond this the partition pauses until they drain. */
  maxWaitingPerDestination: number;
  /** Shutdown began: nothing is resumed any more. */
  stopping: () => boolean;
}

/**
 * Which partitions wait, for what, and when they are read again. A partition is paused and sought
 * back to the record it could not send: until that record is due (a timer resumes it), until its
 * destination's queue drains (or the destination turns out to be hung), or until deferral slots are
 * free again. No handler sleeps, and no other partition waits.
 */
export class PauseControl {
  private readonly resumeTimers = new Map<string, NodeJS.Timeout>();
  /** Partitions paused because this destination's queue is full, resumed as it drains. */
  private readonly blockedBy = new Map<string, Map<string, { topic: string; partition: number }>>();

  constructor(private readonly opts: PauseControlOptions) {}

  /**
   * A destination with a full queue holds its partition (not the others): the record is read again
   * once that destination has drained to half its queue. Tasks of a destination that keeps timing
   * out finish at once (the circuit breaker sends them to the retry tier), so this never lasts.
   */
  waitForDestination(destinationId: string, topic: string, partition: number, offset: string): void {
    const watched = this.blockedBy.has(destinationId);
    const blocked = this.hold(destinationId, topic, partition, offset);
    if (!watched) this.watchForStall(destinationId, blocked);
  }

  /** Every deferral slot is taken: the record is read again once half of them are free. */
  waitForDeferrals(topic: string, partition: number, offset: string): void {
    this.hold(DEFERRALS, topic, partition, offset);
  }

  /** Pauses a partition at a record until resumeBlocked(key); returns the partitions key holds. */
  private hold(key: string, topic: string, partition: number, offset: string): Map<string, { topic: string; partition: number }> {
    this.opts.consumer.pause([{ topic, partitions: [partition] }]);
    this.opts.consumer.seek({ topic, partition, offset });
    let blocked = this.blockedBy.get(key);
    if (!blocked) this.blockedBy.set(key, (blocked = new Map()));
    blocked.set(`${topic}:${partition}`, { topic, partition });
    return blocked;
  }

  /**
   * If the destination turns out to be hung rather than busy, its partitions are read again (and its
   * overflow deferred) instead of waiting for its requests to time out; looked at again while it
   * holds them.
   */
  private watchForStall(destinationId: string, blocked: Map<string, unknown>): void {
    // setImmediate: decided after the loop's poll phase has read the answers that arrived, since a
    // timer runs first when the loop was blocked (a GC pause, a starved process). Decided at once,
    // a healthy destination's overflow went to the retry tier: 407 tasks of 160 000 in one bench.
    const look = () => setImmediate(() => {
      if (this.opts.stopping() || this.blockedBy.get(destinationId) !== blocked) return;
      if (this.opts.stalls.confirm(destinationId, this.opts.clock())) this.resumeBlocked(destinationId);
      else this.watchForStall(destinationId, blocked);
    }).unref();
    setTimeout(look, this.opts.stalls.thresholdMs(destinationId) + 50).unref();
  }

  /** A request to the destination ended: its partitions are read again once its queue is down to half. */
  resumeDrained(destinationId: string): void {
    if (this.opts.perDestination.waiting(destinationId) > this.opts.maxWaitingPerDestination / 2) return;
    this.resumeBlocked(destinationId);
  }

  /** Resumes the partitions a destination (or DEFERRALS) holds, except those waiting until a record is due. */
  resumeBlocked(destinationId: string): void {
    const blocked = this.blockedBy.get(destinationId);
    if (!blocked || this.opts.stopping()) return;
    this.blockedBy.delete(destinationId);
    const resumable = [...blocked.values()].filter(({ topic, partition }) => !this.resumeTimers.has(`${topic}:${partition}`));
    if (resumable.length) this.opts.consumer.resume(resumable.map(({ topic, partition }) => ({ topic, partitions: [partition] })));
  }

  /** Pauses a partition at a record and resumes it `delayMs` later (a tier record not due, a record to read again). */
  waitUntilDue(topic: string, partition: number, offset: string, delayMs: number): void {
    const { consumer } = this.opts;
    const key = `${topic}:${partition}`;
    consumer.pause([{ topic, partitions: [partition] }]);
    consumer.seek({ topic, partition, offset });
    clearTimeout(this.resumeTimers.get(key));
    this.resumeTimers.set(key, setTimeout(() => {
      this.resumeTimers.delete(key);
      this.opts.metrics.waiting.set(this.resumeTimers.size);
      consumer.resume([{ topic, partitions: [partition] }]);
    }, Math.min(delayMs, 2 ** 31 - 1)));
    this.opts.metrics.waiting.set(this.resumeTimers.size);
  }

  /**
   * A new assignment (`assigned`: its `topic:partition` keys): the timers of partitions no longer
   * assigned are dropped, and no partition waits for a destination or deferral slots any more.
   */
  retainOnly(assigned: ReadonlySet<string>): void {
    for (const [key, timer] of this.resumeTimers) {
      if (!assigned.has(key)) { clearTimeout(timer); this.resumeTimers.delete(key); }
    }
    this.blockedBy.clear();
  }

  /** A partition paused before the rebalance and handed back has no timer any more: read it again. */
  resumeStale(): void {
    const stale = this.opts.consumer.paused().flatMap(({ topic, partitions }) => partitions.filter((p) => !this.resumeTimers.has(`${topic}:${p}`)).map((p) => ({ topic, partitions: [p] })));
    if (stale.length) this.opts.consumer.resume(stale);
  }

  /** Shutdown: no timer resumes a partition any more. */
  stop(): void {
    for (const timer of this.resumeTimers.values()) clearTimeout(timer);
    this.resumeTimers.clear();
  }
}
