import { Counter, Gauge, Histogram } from 'prom-client';
import type { CounterConfiguration, GaugeConfiguration, HistogramConfiguration } from 'prom-client';

/**
 * Labels whose values are configuration ids (destinations, sources, audiences, traits) grow with the
 * configuration: 20 000 destinations made delivery's /metrics tens of megabytes. A `BoundedLabel`
 * shows at most N ids by their own value and folds the rest into `_other`, so the label has at most
 * N + 1 values whatever the configuration, and a sum over the label still counts everything
 * (docs/decisions/0023-bounded-metric-labels.md).
 */

/** The value every id that is not shown by its own goes to. */
export const OTHER = '_other';

/** How many ids a label shows: none (all in `_other`), the N most active, or all of them. */
export type LabelBound = { mode: 'none' } | { mode: 'top'; n: number } | { mode: 'all' };

/** What a bounded label shows unless configured: the 100 most active ids (about 250 KB of delivery's metrics). */
export const DEFAULT_LABEL_BOUND: LabelBound = { mode: 'top', n: 100 };

/** `none`, `all` or `top:N` (N from 1 to 10 000); undefined for anything else. */
export function parseLabelBound(text: string): LabelBound | undefined {
  const t = text.trim();
  if (t === 'none' || t === 'all') return { mode: t };
  const m = /^top:(\d{1,5})$/.exec(t);
  const n = m ? Number(m[1]) : NaN;
  return n >= 1 && n <= 10_000 ? { mode: 'top', n } : undefined;
}

/** How often the shown ids are ranked again (activity halves at each ranking: a half-life of a minute). */
export const RANK_EVERY_MS = 60_000;
/**
 * How long a demoted or deleted id's series stay, frozen, before they are removed: long enough for
 * every scrape (15 s in deploy/) to read their last values, so no increment is lost to a removal.
 * Its slot is free only then, which keeps the count of values at N + 1.
 */
export const RETIRE_AFTER_MS = 120_000;
/** An id outside shows instead of a shown one only when it is this many times as active (no flapping between equals). */
const OUTRANK_FACTOR = 2;

export interface BoundedLabelOptions<L extends string> {
  /** The label whose values are bounded, e.g. `destination`. */
  label: L;
  bound: LabelBound;
  /** Whether an id is still configured: a shown id that is not is retired at the next ranking. */
  exists?: (id: string) => boolean;
  clock?: () => number;
}

/** What a bounded metric does when an id stops being shown (frozen) or its series go (removed). */
interface Member { removed(id: string): void }

/** The labels of a bounded metric: the bounded one required, the others as prom-client takes them. */
export type BoundedLabels<T extends string, L extends string> = Partial<Record<T, string | number>> & Record<L, string>;

/**
 * One bounded label shared by the metrics that carry it, so they show the same ids. The N shown
 * ids are the first seen while slots are free, then, at each ranking, the most active (activity: what
 * the metrics counted for the id, halved each minute); an id outside replaces the least active shown
 * one only when twice as active. A replaced (or deleted) id is frozen first: its series stay,
 * unchanged, while what it counts goes to `_other`; after RETIRE_AFTER_MS they are removed (prom-client
 * `remove`) and its slot is free. With `all`, every id is shown and only deleted ones are retired.
 */
export class BoundedLabel<L extends string> {
  private readonly clock: () => number;
  /** Ids with a slot, and when each was frozen (undefined: shown). */
  private readonly slots = new Map<string, number | undefined>();
  private readonly activity = new Map<string, number>();
  private readonly members: Member[] = [];
  private nextRankAt: number;

  constructor(private readonly opts: BoundedLabelOptions<L>) {
    this.clock = opts.clock ?? Date.now;
    this.nextRankAt = this.clock() + RANK_EVERY_MS;
  }

  get label(): L { return this.opts.label; }

  /** Ids that hold a slot (shown or frozen): at most N with `top:N`. */
  get slotCount(): number { return this.slots.size; }

  /** Whether an id's series are its own now (not frozen, not folded); with `all`, any id not frozen. */
  shows(id: string): boolean {
    const { mode } = this.opts.bound;
    if (mode === 'none') return false;
    return this.slots.get(id) === undefined && (mode === 'all' || this.slots.has(id));
  }

  /** The label value to count `weight` for `id` under: the id, or `_other`. */
  valueFor(id: string, weight: number): string {
    const { bound } = this.opts;
    // An id spelt `_other` (ids allow it) shares that series rather than owning it.
    if (bound.mode === 'none' || id === OTHER) return OTHER;
    this.rankIfDue();
    if (bound.mode === 'top') this.activity.set(id, (this.activity.get(id) ?? 0) + weight);
    if (this.slots.has(id)) {
      if (this.slots.get(id) === undefined) return id;
      if (bound.mode === 'all') { this.slots.set(id, undefined); return id; }
      return OTHER;
    }
    if (bound.mode === 'top' && this.slots.size >= bound.n) return OTHER;
    if (this.opts.exists && !this.opts.exists(id)) return OTHER;
    this.slots.set(id, undefined);
    return id;
  }

  /** Ranks again if a ranking is due: bounded metrics call it at each scrape, so it runs without traffic too. */
  rankIfDue(): void {
    const now = this.clock();
    if (now < this.nextRankAt) return;
    this.nextRankAt = now + RANK_EVERY_MS;
    this.rank(now);
  }

  counter<T extends string>(config: CounterConfiguration<T | L>): BoundedCounter<T, L> {
    const counter = new Counter<T | L>({ ...config, collect: () => this.rankIfDue() });
    return this.join(new BoundedCounter<T, L>(this, counter));
  }

  histogram<T extends string>(config: HistogramConfiguration<T | L>): BoundedHistogram<T, L> {
    const histogram = new Histogram<T | L>({ ...config, collect: () => this.rankIfDue() });
    return this.join(new BoundedHistogram<T, L>(this, histogram));
  }

  gauge<T extends string>(config: GaugeConfiguration<T | L>): BoundedGauge<T, L> {
    let bounded: BoundedGauge<T, L> | undefined;
    const gauge = new Gauge<T | L>({ ...config, collect: () => { this.rankIfDue(); bounded?.render(); } });
    bounded = this.join(new BoundedGauge<T, L>(this, gauge, this.opts.exists));
    return bounded;
  }

  private join<M extends Member>(member: M): M {
    this.members.push(member);
    return member;
  }

  private rank(now: number): void {
    const { bound, exists } = this.opts;
    for (const [id, frozenAt] of this.slots) {
      if (frozenAt !== undefined && now - frozenAt >= RETIRE_AFTER_MS) {
        this.slots.delete(id);
        for (const m of this.members) m.removed(id);
      } else if (frozenAt === undefined && exists && !exists(id)) this.slots.set(id, now);
    }
    if (bound.mode === 'top') {
      const outside = [...this.activity].filter(([id]) => !this.slots.has(id) && (!exists || exists(id))).sort((a, b) => b[1] - a[1]);
      const shown = [...this.slots].filter(([, frozenAt]) => frozenAt === undefined).map(([id]) => [id, this.activity.get(id) ?? 0] as const).sort((a, b) => a[1] - b[1]);
      let weakest = 0;
      for (const [id, score] of outside) {
        if (this.slots.size < bound.n) { this.slots.set(id, undefined); continue; }
        const incumbent = shown[weakest];
        if (!incumbent || score <= OUTRANK_FACTOR * incumbent[1]) break;
        this.slots.set(incumbent[0], now);
        weakest++;
      }
      for (const [id, score] of this.activity) {
        if (score < 1 && !this.slots.has(id)) this.activity.delete(id);
        else this.activity.set(id, score / 2);
      }
    }
  }
}

/** The other labels' values in a fixed order: one key per series of an id. */
function restKey(labels: Record<string, string | number | undefined>, label: string): string {
  let key = '';
  for (const name of Object.keys(labels).sort()) if (name !== label) key += `${name}=${String(labels[name])}\u0000`;
  return key;
}

/** Remembers each shown id's label sets, to remove them all when the id is retired. */
class SeriesOfIds<T extends string, L extends string> {
  private readonly byId = new Map<string, Map<string, BoundedLabels<T, L>>>();

  constructor(private readonly label: L) {}

  add(id: string, labels: BoundedLabels<T, L>): void {
    let of = this.byId.get(id);
    if (!of) this.byId.set(id, (of = new Map()));
    const key = restKey(labels, this.label);
    if (!of.has(key)) of.set(key, labels);
  }

  take(id: string): Iterable<BoundedLabels<T, L>> {
    const of = this.byId.get(id);
    this.byId.delete(id);
    return of?.values() ?? [];
  }
}

/** A counter whose bounded label shows at most N ids; what the others count goes to `_other`. */
export class BoundedCounter<T extends string, L extends string> implements Member {
  private readonly series: SeriesOfIds<T, L>;

  constructor(private readonly bounded: BoundedLabel<L>, readonly metric: Counter<T | L>) {
    this.series = new SeriesOfIds(bounded.label);
  }

  inc(labels: BoundedLabels<T, L>, value = 1): void {
    const id = labels[this.bounded.label];
    const shown = this.bounded.valueFor(id, value);
    const actual = shown === id ? labels : { ...labels, [this.bounded.label]: shown };
    this.metric.inc(actual, value);
    if (shown !== OTHER) this.series.add(id, actual);
  }

  get(): ReturnType<Counter<T | L>['get']> { return this.metric.get(); }

  removed(id: string): void { for (const labels of this.series.take(id)) this.metric.remove(labels); }
}

/** A histogram whose bounded label shows at most N ids; the others' observations go to `_other`. */
export class BoundedHistogram<T extends string, L extends string> implements Member {
  private readonly series: SeriesOfIds<T, L>;

  constructor(private readonly bounded: BoundedLabel<L>, readonly metric: Histogram<T | L>) {
    this.series = new SeriesOfIds(bounded.label);
  }

  observe(labels: BoundedLabels<T, L>, value: number): void {
    const id = labels[this.bounded.label];
    const shown = this.bounded.valueFor(id, 1);
    const actual = shown === id ? labels : { ...labels, [this.bounded.label]: shown };
    this.metric.observe(actual, value);
    if (shown !== OTHER) this.series.add(id, actual);
  }

  get(): ReturnType<Histogram<T | L>['get']> { return this.metric.get(); }

  removed(id: string): void { for (const labels of this.series.take(id)) this.metric.remove(labels); }
}

/**
 * A gauge whose bounded label shows the ids the label shows (setting a value claims no slot); the
 * values of the others add up in `_other`. Rendered at each scrape from the values last set, so a
 * frozen or folded id moves to `_other` at once; an id no longer configured is forgotten.
 */
export class BoundedGauge<T extends string, L extends string> implements Member {
  /** The last value set per id and per set of the other labels; zeros are kept only for shown ids. */
  private readonly values = new Map<string, Map<string, { labels: BoundedLabels<T, L>; value: number }>>();
  /** The `_other` series shown once: they stay, at 0 when nothing is folded, rather than vanish. */
  private readonly others = new Map<string, BoundedLabels<T, L>>();

  constructor(private readonly bounded: BoundedLabel<L>, readonly metric: Gauge<T | L>, private readonly exists: ((id: string) => boolean) | undefined) {}

  set(labels: BoundedLabels<T, L>, value: number): void {
    const id = labels[this.bounded.label];
    let of = this.values.get(id);
    if (!of) this.values.set(id, (of = new Map()));
    of.set(restKey(labels, this.bounded.label), { labels, value });
  }

  get(): ReturnType<Gauge<T | L>['get']> { return this.metric.get(); }

  /** Called by the gauge's collect: the series from the values. */
  render(): void {
    this.metric.reset();
    const label = this.bounded.label;
    for (const labels of this.others.values()) this.metric.set(labels, 0);
    for (const [id, of] of this.values) {
      if (this.exists && !this.exists(id)) { this.values.delete(id); continue; }
      const shown = this.bounded.shows(id);
      for (const [key, { labels, value }] of of) {
        if (shown) { this.metric.set(labels, value); continue; }
        if (value === 0) { of.delete(key); continue; }
        const other = { ...labels, [label]: OTHER };
        if (!this.others.has(key)) this.others.set(key, other);
        this.metric.inc(other, value);
      }
      if (of.size === 0) this.values.delete(id);
    }
  }

  removed(): void { /* rendered from the values at each scrape */ }
}
