import { REFUSING_REFRESH_MS, type DestinationStates } from '@switchyard/platform/holds/destination-states';
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

/**
 * Tells fan-out which destinations refuse every request (DestinationState), so that it holds their
 * tasks instead of writing them (fan-out's held-ranges.ts): "refusing" when this instance defers a
 * destination's work with every circuit open, again every REFUSING_REFRESH_MS while that lasts, and
 * "answering" when a request to a destination reported refusing gets an answer. Only an
 * optimisation of the write path: a report lost or late changes which way the tasks travel (held
 * ranges or written tasks deferred here), never whether they arrive. At most one write per
 * destination is under way.
 */
export class RefusalPublisher {
  private readonly writing = new Set<string>();

  constructor(private readonly deps: RefusalPublisherDeps) {}

  /**
   * Work of the destination was deferred without a request; reported (or reported again) if
   * `everyCircuitOpen()`, asked only when a report is due.
   */
  refusing(destinationId: string, everyCircuitOpen: () => boolean): void {
    const now = this.deps.clock();
    const known = this.deps.states.get(destinationId);
    if (known?.refusing && now - known.at < REFUSING_REFRESH_MS) return;
    if (!everyCircuitOpen()) return;
    this.publish({ destinationId, refusing: true, at: now, writer: this.deps.writer });
  }

  /** A request to the destination got an answer (any status: it is reachable). Called for every answer: a map lookup when nothing changes. */
  answered(destinationId: string): void {
    if (!this.deps.states.get(destinationId)?.refusing) return;
    this.publish({ destinationId, refusing: false, at: this.deps.clock(), writer: this.deps.writer });
  }

  private publish(state: DestinationState): void {
    if (this.writing.has(state.destinationId)) return;
    this.writing.add(state.destinationId);
    // Logged when it changes, not on each refresh.
    if (this.deps.states.get(state.destinationId)?.refusing !== state.refusing) {
      this.deps.logger.info({ destinationId: state.destinationId, refusing: state.refusing }, state.refusing
        ? 'destination refuses every request: reported, fan-out holds its tasks'
        : 'destination answers again: reported, fan-out writes its tasks');
    }
    // Applied at once: the next calls see it before it is read back from the topic.
    this.deps.states.apply(state);
    this.deps.write(state).catch((err: unknown) => {
      this.deps.logger.warn({ err, destinationId: state.destinationId, refusing: state.refusing }, 'destination state not written');
    }).finally(() => this.writing.delete(state.destinationId));
  }
}
