import { REFUSING_REFRESH_MS, refusalReason, type DestinationStates, type HoldReason } from '@switchyard/platform/holds/destination-states';
import type { Logger } from '@switchyard/platform/logger';
import type { DestinationState } from '@switchyard/platform/schemas/generated';

export interface RefusalPublisherDeps {
  /** Every instance's latest reports (the destination-state topic, followed), this one's applied as written. */
  states: DestinationStates;
  /** Writes one record to the destination-state topic (key: destination id). */
  write: (state: DestinationState) => Promise<void>;
  /** Names this instance in the records. */
  writer: string;
  clock: () => number;
  logger: Logger;
}

/** Twice the refresh interval: no instance holding a rate-limited destination's work refreshed its report for this long. */
export const RATE_LIMITED_QUIET_MS = 2 * REFUSING_REFRESH_MS;

/**
 * Tells fan-out which destinations' work delivery holds back (DestinationState), so that it holds
 * their tasks instead of writing them (fan-out's held-ranges.ts):
 * - "refusing, circuit_open" when this instance defers a destination's work with every circuit
 *   open, and "answering" when a request to it gets an answer;
 * - "refusing, rate_limited" when this instance holds a destination's work because its rate limit
 *   has no token for it before the first tier's delay, and "answering" when a held range of it ran
 *   to its end with a token to spare and no instance has held its work for a while (its backlog is
 *   gone).
 * Written again every REFUSING_REFRESH_MS while it lasts. Only an optimisation of the write path:
 * a report lost or late changes which way the tasks travel (held ranges or written tasks deferred
 * or held here), never whether they arrive. At most one write per destination is under way.
 */
export class RefusalPublisher {
  private readonly writing = new Set<string>();

  constructor(private readonly deps: RefusalPublisherDeps) {}

  /**
   * Work of the destination was deferred without a request; reported (or reported again) if
   * `everyCircuitOpen()`, asked only when a report is due.
   */
  refusing(destinationId: string, everyCircuitOpen: () => boolean): void {
    if (!this.reportDue(destinationId)) return;
    if (!everyCircuitOpen()) return;
    this.publish(destinationId, 'circuit_open');
  }

  /** Work of the destination was held by its rate limit (no token before the first tier's delay). */
  rateLimited(destinationId: string): void {
    if (this.reportDue(destinationId)) this.publish(destinationId, 'rate_limited');
  }

  /**
   * A request to the destination got an answer (any status: it is reachable). Called for every
   * answer: a map lookup when nothing changes. A rate-limited destination answers all along.
   */
  answered(destinationId: string): void {
    if (this.refusingFor(destinationId) === 'circuit_open') this.publish(destinationId, undefined);
  }

  /**
   * A held range of the destination ran to its end with a token to spare, or it has no rate limit
   * now. Reported only once no instance has held its work for RATE_LIMITED_QUIET_MS: the backlog
   * waits in the first tier, not in any token bucket, so one range that went through says little
   * while others still come round and are held again (each refreshes the report when due).
   */
  underLimit(destinationId: string): void {
    if (this.refusingFor(destinationId) === 'rate_limited' && this.reportAge(destinationId) >= RATE_LIMITED_QUIET_MS) this.publish(destinationId, undefined);
  }

  /** Whether a refusing report is due: none is known, or the latest is older than the refresh interval. */
  private reportDue(destinationId: string): boolean {
    return this.reportAge(destinationId) >= REFUSING_REFRESH_MS;
  }

  /** How long ago the latest refusing report was written (infinite when the latest says answering). */
  private reportAge(destinationId: string): number {
    const known = this.deps.states.get(destinationId);
    return known?.refusing ? this.deps.clock() - known.at : Number.POSITIVE_INFINITY;
  }

  private refusingFor(destinationId: string): HoldReason | undefined {
    const known = this.deps.states.get(destinationId);
    return known?.refusing ? refusalReason(known) : undefined;
  }

  private publish(destinationId: string, reason: HoldReason | undefined): void {
    if (this.writing.has(destinationId)) return;
    this.writing.add(destinationId);
    const state: DestinationState = { destinationId, refusing: reason !== undefined, at: this.deps.clock(), writer: this.deps.writer, reason: reason ?? null };
    // Logged when it changes, not on each refresh.
    const known = this.deps.states.get(destinationId);
    if (known?.refusing !== state.refusing || (known.refusing && refusalReason(known) !== reason)) {
      this.deps.logger.info({ destinationId, refusing: state.refusing, reason }, state.refusing
        ? 'destination holds back its work: reported, fan-out holds its tasks'
        : 'destination takes its work again: reported, fan-out writes its tasks');
    }
    // Applied at once: the next calls see it before it is read back from the topic.
    this.deps.states.apply(state);
    this.deps.write(state).catch((err: unknown) => {
      this.deps.logger.warn({ err, destinationId, refusing: state.refusing, reason }, 'destination state not written');
    }).finally(() => this.writing.delete(destinationId));
  }
}
