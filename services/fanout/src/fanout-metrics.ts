import { BoundedLabel, DEFAULT_LABEL_BOUND, type LabelBound } from '@switchyard/platform/bounded-labels';
import { Counter, Gauge, Histogram, initialiseCounter, LATENCY_BUCKETS, type Registry } from '@switchyard/platform/metrics';
import { FILTER_REASONS, INVALID_REASONS } from './fanout-decision.js';

/** Why a record did not decode (reason of fanout_invalid_records_total, beside the decision's). */
export const UNREADABLE_REASONS = ['unknown_schema', 'undecodable'] as const;
export type UnreadableReason = (typeof UNREADABLE_REASONS)[number];

/** Which destinations get series of their own (SWITCHYARD_METRICS_DESTINATIONS), and whether one is still configured. */
export interface DestinationLabelOptions {
  bound: LabelBound;
  exists?: (destinationId: string) => boolean;
  clock?: () => number;
}

/**
 * The fan-out hop's metrics. `destination` labels carry destination ids, bounded
 * (docs/decisions/0023-bounded-metric-labels.md): the most active ones by their id, the rest summed in
 * `destination="_other"`. The counters by reason start at 0 for every reason, so their series exist
 * before the first one.
 */
export function fanoutMetrics(registry: Registry, destinations: DestinationLabelOptions = { bound: DEFAULT_LABEL_BOUND }) {
  const perDestination = new BoundedLabel({ label: 'destination', ...destinations });
  const metrics = {
    consumed: new Counter({ name: 'fanout_records_consumed_total', help: 'Ingest records read', registers: [registry] }),
    tasks: perDestination.counter({ name: 'fanout_tasks_produced_total', help: 'Delivery tasks written, by destination', labelNames: ['destination'], registers: [registry] }),
    held: perDestination.counter({ name: 'fanout_tasks_held_total', help: 'Tasks not written because delivery reports their destination refusing: held as ranges in the first retry tier, by destination', labelNames: ['destination'], registers: [registry] }),
    filtered: new Counter({ name: 'fanout_events_filtered_total', help: 'Events that produced no task, by reason; reason filter also counts events a destination filter kept from some destinations only', labelNames: ['reason'], registers: [registry] }),
    invalid: new Counter({ name: 'fanout_invalid_records_total', help: 'Records moved to invalid-events, by reason', labelNames: ['reason'], registers: [registry] }),
    transaction: new Histogram({ name: 'fanout_transaction_seconds', help: 'Duration of one consume-produce-commit transaction', buckets: LATENCY_BUCKETS, registers: [registry] }),
    batchRecords: new Histogram({ name: 'fanout_batch_records', help: 'Ingest records per transaction', buckets: [1, 10, 100, 500, 2000, 10000], registers: [registry] }),
    skipped: new Counter({ name: 'fanout_records_skipped_total', help: 'Ingest records fetched again after a rebalance that a previous owner of the partition had committed, skipped', registers: [registry] }),
    fenced: new Counter({ name: 'fanout_partitions_fenced_in_total', help: 'Times an ingest partition was fenced in (its transactional id initialised: after a rebalance, a start, a failed transaction)', registers: [registry] }),
    registryUnavailable: new Counter({ name: 'fanout_registry_unavailable_total', help: 'Batches read again later because the schema registry did not answer a lookup of a writer schema', registers: [registry] }),
    lag: new Gauge({ name: 'fanout_consumer_lag', help: 'Records between the last processed offset and the high watermark, by partition', labelNames: ['partition'], registers: [registry] }),
  };
  initialiseCounter(metrics.filtered, { reason: FILTER_REASONS });
  initialiseCounter(metrics.invalid, { reason: [...INVALID_REASONS, ...UNREADABLE_REASONS] });
  return metrics;
}

export type FanoutMetrics = ReturnType<typeof fanoutMetrics>;
