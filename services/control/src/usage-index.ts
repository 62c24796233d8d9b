import type { AvroCodec } from '@switchyard/platform/codec/avro-codec';
import type { Kafka } from '@switchyard/platform/kafka/client';
import { followTopic } from '@switchyard/platform/kafka/topic-follower';
import type { Logger } from '@switchyard/platform/logger';
import type { UsageCount } from '@switchyard/platform/schemas/generated';
import { usageKey } from '@switchyard/platform/usage/usage-tally';

export interface UsageDay { day: string; accepted: number; rejected: number; filtered: number; filteredBy: { integrations: number; filter: number } }

/**
 * Usage per source and UTC day, summed from the writers' running totals. Pure: the latest total of
 * each writer (process run of ingest or fan-out) for a (source, day) replaces its older ones, and a
 * day's usage is the sum over writers.
 */
export class UsageTotals {
  /** sourceId → key (source|day|writer) → latest total. */
  private readonly bySource = new Map<string, Map<string, UsageCount>>();

  /** Writer totals held (sources × days × writers). */
  get size(): number {
    let n = 0;
    for (const totals of this.bySource.values()) n += totals.size;
    return n;
  }

  add(r: UsageCount): void {
    let totals = this.bySource.get(r.sourceId);
    if (!totals) this.bySource.set(r.sourceId, (totals = new Map()));
    const key = usageKey(r);
    const known = totals.get(key);
    if (!known || known.updatedAt <= r.updatedAt) totals.set(key, r);
  }

  /** Newest day first; days before `oldest` (YYYY-MM-DD) are left out. */
  days(sourceId: string, oldest = ''): UsageDay[] {
    const byDay = new Map<string, UsageDay>();
    for (const r of this.bySource.get(sourceId)?.values() ?? []) {
      if (r.day < oldest) continue;
      let d = byDay.get(r.day);
      if (!d) byDay.set(r.day, (d = { day: r.day, accepted: 0, rejected: 0, filtered: 0, filteredBy: { integrations: 0, filter: 0 } }));
      d.accepted += r.accepted;
      d.rejected += r.rejected;
      d.filtered += r.filtered;
      d.filteredBy.filter += r.filteredByFilter;
      d.filteredBy.integrations += r.filtered - r.filteredByFilter;
    }
    return [...byDay.values()].sort((a, b) => (a.day < b.day ? 1 : a.day > b.day ? -1 : 0));
  }
}

/**
 * Follows the usage topic (compacted, 400 days, one partition) from the beginning into UsageTotals.
 * Its size is sources × days × writers, small, so reading it whole at start is cheap.
 */
export class UsageIndex {
  readonly totals = new UsageTotals();
  private follower: { stop(): Promise<void> } | undefined;

  constructor(private readonly opts: { kafka: Kafka; codec: AvroCodec; topic: string; logger: Logger }) {}

  async start(): Promise<void> {
    this.follower = await followTopic({
      ...this.opts, label: 'usage-index', from: 'beginning',
      onRecord: (decoded) => { if (decoded.name === 'io.switchyard.pipeline.UsageCount') this.totals.add(decoded.value); },
    });
  }

  async stop(): Promise<void> { await this.follower?.stop(); }
}
