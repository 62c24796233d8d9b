import { Counter, Gauge, Histogram, LATENCY_BUCKETS, type Registry } from '@switchyard/platform/metrics';

/** The audiences processor's metrics; `audience` labels carry audience ids (a handful per source). */
export function audienceMetrics(registry: Registry) {
  return {
    users: new Gauge({ name: 'audiences_state_users', help: 'Users whose state this instance holds (those of the ingest partitions it owns)', registers: [registry] }),
    changes: new Counter({ name: 'audiences_membership_changes_total', help: 'Identify calls emitted for membership changes, by audience and direction', labelNames: ['audience', 'member'], registers: [registry] }),
    traitChanges: new Counter({ name: 'audiences_computed_trait_changes_total', help: 'Identify calls emitted for computed-trait changes, by trait', labelNames: ['trait'], registers: [registry] }),
    syncSeconds: new Histogram({ name: 'audiences_sync_seconds', help: 'Duration of one sync (expired windows) or backfill pass', labelNames: ['kind'], buckets: LATENCY_BUCKETS, registers: [registry] }),
    changelogLag: new Gauge({ name: 'audiences_changelog_lag', help: 'Changelog records not yet read to restore the state of an ingest partition this instance owns, by partition: 0 once restored', labelNames: ['partition'], registers: [registry] }),
    fenced: new Counter({ name: 'audiences_partitions_fenced_in_total', help: 'Times an ingest partition was fenced in (its transactional id initialised and its changelog partition restored)', registers: [registry] }),
    consumed: new Counter({ name: 'audiences_records_consumed_total', help: 'Ingest records read', registers: [registry] }),
  };
}

export type AudienceMetrics = ReturnType<typeof audienceMetrics>;
