import { BoundedLabel, DEFAULT_LABEL_BOUND, type LabelBound } from '@switchyard/platform/bounded-labels';
import { Counter, Gauge, Histogram, LATENCY_BUCKETS, type Registry } from '@switchyard/platform/metrics';

/** Which audiences and computed traits get series of their own (SWITCHYARD_METRICS_AUDIENCES), and whether one is still configured. */
export interface AudienceLabelOptions {
  bound: LabelBound;
  audienceExists?: (audienceId: string) => boolean;
  traitExists?: (traitId: string) => boolean;
}

/**
 * The audiences processor's metrics. `audience` and `trait` labels carry configuration ids, each
 * bounded (docs/decisions/0023-bounded-metric-labels.md): the most active ones by their id, the
 * rest summed in "_other".
 */
export function audienceMetrics(registry: Registry, labels: AudienceLabelOptions = { bound: DEFAULT_LABEL_BOUND }) {
  const audiences = new BoundedLabel({ label: 'audience', bound: labels.bound, ...(labels.audienceExists ? { exists: labels.audienceExists } : {}) });
  const traits = new BoundedLabel({ label: 'trait', bound: labels.bound, ...(labels.traitExists ? { exists: labels.traitExists } : {}) });
  return {
    users: new Gauge({ name: 'audiences_state_users', help: 'Users whose state this instance holds (those of the ingest partitions it owns)', registers: [registry] }),
    changes: audiences.counter({ name: 'audiences_membership_changes_total', help: 'Identify calls emitted for membership changes, by audience and direction', labelNames: ['audience', 'member'], registers: [registry] }),
    traitChanges: traits.counter({ name: 'audiences_computed_trait_changes_total', help: 'Identify calls emitted for computed-trait changes, by trait', labelNames: ['trait'], registers: [registry] }),
    syncSeconds: new Histogram({ name: 'audiences_sync_seconds', help: 'Duration of one sync (expired windows) or backfill pass', labelNames: ['kind'], buckets: LATENCY_BUCKETS, registers: [registry] }),
    changelogLag: new Gauge({ name: 'audiences_changelog_lag', help: 'Changelog records not yet read to restore the state of an ingest partition this instance owns, by partition: 0 once restored', labelNames: ['partition'], registers: [registry] }),
    fenced: new Counter({ name: 'audiences_partitions_fenced_in_total', help: 'Times an ingest partition was fenced in (its transactional id initialised and its changelog partition restored)', registers: [registry] }),
    consumed: new Counter({ name: 'audiences_records_consumed_total', help: 'Ingest records read', registers: [registry] }),
  };
}

export type AudienceMetrics = ReturnType<typeof audienceMetrics>;
