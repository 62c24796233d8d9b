import { BoundedLabel, DEFAULT_LABEL_BOUND, type LabelBound } from '@switchyard/platform/bounded-labels';
import { Counter, Gauge, Histogram, initialiseCounter, LATENCY_BUCKETS, type Registry } from '@switchyard/platform/metrics';
import { DEAD_LETTER_REASONS } from './outcome.js';

/** Label `policy` of delivery_retries_total: which retry policy chose the wait. */
const RETRY_POLICY_SOURCES = ['default', 'destination'] as const;

/** What happens to deferred ranges (label `event` of delivery_deferred_ranges_total). */
export const DEFERRED_RANGE_EVENTS = ['written', 'deferred_again', 'read', 'rest_written', 'lost'] as const;
export type DeferredRangeEvent = (typeof DEFERRED_RANGE_EVENTS)[number];

/** What the attempts recorder did with trace records (label `result` of delivery_attempt_records_total). */
export const ATTEMPT_RECORD_RESULTS = ['written', 'dropped_overflow', 'dropped_send_failed'] as const;

/** Which destinations get series of their own (SWITCHYARD_METRICS_DESTINATIONS), and whether one is still configured. */
export interface DestinationLabelOptions {
  bound: LabelBound;
  exists?: (destinationId: string) => boolean;
  clock?: () => number;
}

/**
 * The delivery hop's metrics. `destination` labels carry destination ids, bounded
 * (docs/decisions/0023-bounded-metric-labels.md): the most active ones by their id, the rest summed in
 * `destination="_other"`; status classes and reasons are small fixed sets. The counters of fixed
 * sets (dead-letter reasons, retry tiers 1..retryTiers, deferred-range events) start at 0 for every
 * value, so their series exist before the first failure.
 */
export function deliveryMetrics(registry: Registry, known: { retryTiers: number }, destinations: DestinationLabelOptions = { bound: DEFAULT_LABEL_BOUND }) {
  // Read at each scrape rather than set twice per task.
  let inFlightNow = (): number => 0;
  let rateLimitWaitingNow = (): number => 0;
  const perDestination = new BoundedLabel({ label: 'destination', ...destinations });
  const metrics = {
    /** Where delivery_in_flight_tasks is read from (the consumer's global slots in use). */
    countInFlight(source: () => number): void { inFlightNow = source; },
    attempts: perDestination.counter({ name: 'delivery_attempts_total', help: 'Webhook requests by destination and outcome class (2xx, 3xx, 4xx, 5xx, timeout, error, skipped)', labelNames: ['destination', 'status_class'], registers: [registry] }),
    requestSeconds: perDestination.histogram({ name: 'delivery_request_seconds', help: 'Webhook request duration', labelNames: ['destination'], buckets: LATENCY_BUCKETS, registers: [registry] }),
    endToEndSeconds: new Histogram({ name: 'delivery_end_to_end_seconds', help: 'From receivedAt at ingest to a 2xx from the webhook', buckets: [...LATENCY_BUCKETS, 60, 300, 1800, 3600, 14400], registers: [registry] }),
    delivered: perDestination.counter({ name: 'delivery_tasks_delivered_total', help: 'Tasks a webhook accepted, by destination', labelNames: ['destination'], registers: [registry] }),
    inFlight: new Gauge({ name: 'delivery_in_flight_tasks', help: 'Tasks admitted and not yet finished', registers: [registry], collect() { this.set(inFlightNow()); } }),
    retries: new Counter({ name: 'delivery_retries_total', help: 'Tasks sent to a retry tier, by tier and by the retry policy that chose the wait (default, or the destination\'s own)', labelNames: ['tier', 'policy'], registers: [registry] }),
    deadLetters: new Counter({ name: 'delivery_dead_letters_total', help: 'Tasks dead-lettered, by reason', labelNames: ['reason'], registers: [registry] }),
    breakerOpen: perDestination.gauge({ name: 'delivery_breaker_open', help: 'Destinations whose last endpoint tried has its circuit open or half-open (1), by destination; _other sums the destinations not shown', labelNames: ['destination'], registers: [registry] }),
    lag: new Gauge({ name: 'delivery_consumer_lag', help: 'Records between the consumed position and the high watermark, by topic', labelNames: ['topic'], registers: [registry] }),
    attemptRecords: new Counter({ name: 'delivery_attempt_records_total', help: 'Trace records of attempts (delivery-attempts topic): written, dropped_overflow (buffer full, oldest dropped), dropped_send_failed', labelNames: ['result'], registers: [registry] }),
    deferredRanges: new Counter({ name: 'delivery_deferred_ranges_total', help: 'Ranges of deferred tasks (one tier record each): written (first deferral), deferred_again (still refusing when due), read (tasks run again), rest_written (what a shutdown left of a run, written back), lost (no longer in the delivery topic)', labelNames: ['event'], registers: [registry] }),
    registryUnavailable: new Counter({ name: 'delivery_registry_unavailable_total', help: 'Lookups of a writer schema the schema registry did not answer: the record was read again later, not set aside', registers: [registry] }),
    rateLimited: perDestination.counter({ name: 'delivery_rate_limited_total', help: 'Tasks of rate-limited destinations (by destination) over their limit: waited (in memory, up to 1 s) or held (set aside in the first retry tier, no attempt counted)', labelNames: ['destination', 'action'], registers: [registry] }),
    rateLimitWaiting: new Gauge({ name: 'delivery_rate_limit_waiting_tasks', help: 'Tasks waiting in memory for a token of their destination\'s rate limit', registers: [registry], collect() { this.set(rateLimitWaitingNow()); } }),
    /** Where delivery_rate_limit_waiting_tasks is read from. */
    countRateLimitWaiting(source: () => number): void { rateLimitWaitingNow = source; },
    notifications: new Counter({ name: 'delivery_notifications_total', help: 'Attempts of notification tasks (notification endpoints): delivered, failed (retried or dead-lettered)', labelNames: ['outcome'], registers: [registry] }),
    waiting: new Gauge({ name: 'delivery_tier_waiting_partitions', help: 'Retry-tier partitions paused until their head record is due', registers: [registry] }),
  };
  initialiseCounter(metrics.deadLetters, { reason: DEAD_LETTER_REASONS });
  initialiseCounter(metrics.retries, { tier: Array.from({ length: known.retryTiers }, (_, i) => i + 1), policy: RETRY_POLICY_SOURCES });
  initialiseCounter(metrics.deferredRanges, { event: DEFERRED_RANGE_EVENTS });
  initialiseCounter(metrics.notifications, { outcome: ['delivered', 'failed'] });
  return metrics;
}

export type DeliveryMetrics = ReturnType<typeof deliveryMetrics>;

export function statusClass(result: { kind: 'response'; status: number } | { kind: 'error'; error: string }): string {
  if (result.kind === 'error') return result.error === 'timeout' ? 'timeout' : 'error';
  return `${Math.floor(result.status / 100)}xx`;
}
