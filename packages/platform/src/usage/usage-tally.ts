import type { UsageCount } from '../schemas/generated.js';

/** How a call counts in a source's usage (docs/admin-api.md, "Message trace and usage"). */
export type UsageOutcome = 'accepted' | 'rejected' | 'filtered';
export const USAGE_OUTCOMES: readonly UsageOutcome[] = ['accepted', 'rejected', 'filtered'];
/**
 * Why a call counts as filtered: its integrations map kept it from every destination, or a
 * destination's event filter kept it from at least one (counted once per call either way).
 */
export type FilterReason = 'integrations' | 'filter';

/** The UTC day of a time, YYYY-MM-DD. */
export function utcDay(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

interface Entry { sourceId: string; day: string; counts: Record<UsageOutcome | 'filteredByFilter', number>; dirty: boolean }

/**
 * One process's running totals of calls per (source, UTC day, outcome). Pure: the recorder asks
 * for the totals that changed since it last asked and writes them; readers keep the latest total
 * of each writer (the usage topic is compacted on sourceId|day|writer) and sum over writers. Totals
 * rather than deltas make a record safe to write twice and let compaction keep the topic small.
 * Days older than `keepDays` are forgotten once written (late calls for them start a fresh entry,
 * whose total is still this writer's own count, so nothing is lost).
 */
export class UsageTally {
  private readonly entries = new Map<string, Entry>();

  constructor(readonly writer: string, private readonly keepDays = 2) {}

  /** `reason`: for `filtered`, why (a destination filter is counted apart; integrations is the rest). */
  add(sourceId: string, at: number, outcome: UsageOutcome, n = 1, reason?: FilterReason): void {
    if (n <= 0) return;
    const day = utcDay(at);
    const key = `${sourceId}|${day}`;
    let entry = this.entries.get(key);
    if (!entry) this.entries.set(key, (entry = { sourceId, day, counts: { accepted: 0, rejected: 0, filtered: 0, filteredByFilter: 0 }, dirty: false }));
    entry.counts[outcome] += n;
    if (outcome === 'filtered' && reason === 'filter') entry.counts.filteredByFilter += n;
    entry.dirty = true;
  }

  /** The totals that changed since the last call, marked clean; `failed` puts them back. */
  takeChanged(now: number): UsageCount[] {
    const out: UsageCount[] = [];
    const oldest = utcDay(now - (this.keepDays - 1) * 86_400_000);
    for (const [key, e] of this.entries) {
      if (e.dirty) {
        e.dirty = false;
        out.push({ sourceId: e.sourceId, day: e.day, writer: this.writer, accepted: e.counts.accepted, rejected: e.counts.rejected, filtered: e.counts.filtered, filteredByFilter: e.counts.filteredByFilter, updatedAt: now });
      } else if (e.day < oldest) {
        this.entries.delete(key);
      }
    }
    return out;
  }

  /** A write of these totals failed: they are written with the next ones. */
  failed(records: UsageCount[]): void {
    for (const r of records) {
      const e = this.entries.get(`${r.sourceId}|${r.day}`);
      if (e) e.dirty = true;
    }
  }

  get size(): number { return this.entries.size; }
}

/** The key of a usage record: one per writer, source and day (the topic keeps the latest). */
export function usageKey(r: Pick<UsageCount, 'sourceId' | 'day' | 'writer'>): string {
  return `${r.sourceId}|${r.day}|${r.writer}`;
}
