import type { AvroCodec } from '../codec/avro-codec.js';
import type { Kafka } from '../kafka/client.js';
import { followTopic } from '../kafka/topic-follower.js';
import type { Logger } from '../logger.js';
import type { DestinationHealth, DestinationState } from '../schemas/generated.js';

/**
 * How long a "refusing" record counts without being written again. Delivery writes it again every
 * REFUSING_REFRESH_MS while it keeps deferring the destination's work with every circuit open; a
 * record older than this (delivery stopped, or stopped seeing the destination's ranges) is taken
 * for "not known to refuse", and fan-out writes the destination's tasks again.
 */
export const REFUSING_FRESH_MS = 60_000;
export const REFUSING_REFRESH_MS = 10_000;

/**
 * The latest DestinationState of each destination as read from the destination-state topic (one
 * partition: log order is the order they were written), plus any a writer applied itself before
 * reading it back.
 */
export class DestinationStates {
  private readonly latest = new Map<string, DestinationState>();

  apply(state: DestinationState): void {
    this.latest.set(state.destinationId, state);
  }

  get(destinationId: string): DestinationState | undefined {
    return this.latest.get(destinationId);
  }

  /** Whether the destination's tasks are held: its latest state says refusing, written recently. */
  refusing(destinationId: string, now: number): boolean {
    return this.heldFor(destinationId, now) !== undefined;
  }

  /** Why the destination's tasks are held, if they are (its latest state says refusing, written recently). */
  heldFor(destinationId: string, now: number): HoldReason | undefined {
    const state = this.latest.get(destinationId);
    if (state === undefined || !state.refusing || now - state.at >= REFUSING_FRESH_MS) return undefined;
    return refusalReason(state);
  }
}

/**
 * Why delivery holds back a destination's work: every circuit of its URLs is open (an attempt is
 * counted), or its rate limit has no token for its tasks before the first tier's delay (none is).
 */
export type HoldReason = 'circuit_open' | 'rate_limited';

/** The reason a refusing state gives (records written before it had one are circuit_open). */
export function refusalReason(state: Pick<DestinationState, 'reason'>): HoldReason {
  return state.reason === 'rate_limited' ? 'rate_limited' : 'circuit_open';
}

/** The key of a destination's DestinationHealth in the destination-state topic (its DestinationState is keyed by the bare id). */
export const healthKey = (destinationId: string): string => `health:${destinationId}`;

/**
 * Reads the destination-state topic from its start into `states` (and the failing clocks into
 * `onHealth`, when given) and follows it; `stop` ends that.
 */
export function followDestinationStates(opts: { kafka: Kafka; codec: AvroCodec; topic: string; logger: Logger; states?: DestinationStates; onHealth?: (health: DestinationHealth) => void }): Promise<{ stop(): Promise<void> }> {
  return followTopic({
    kafka: opts.kafka, codec: opts.codec, topic: opts.topic, logger: opts.logger, label: 'destination-state', from: 'beginning',
    onRecord: (decoded) => {
      if (decoded.name === 'io.switchyard.pipeline.DestinationState') opts.states?.apply(decoded.value);
      else if (decoded.name === 'io.switchyard.pipeline.DestinationHealth') opts.onHealth?.(decoded.value);
    },
  });
}
