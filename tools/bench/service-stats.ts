// What a service's own metrics say about a load window: time spent in garbage collection and how
// late its event loop ran (prom-client's default metrics; the event-loop histogram is reset at each
// scrape, so a scrape before the load and one after bound the window). Where a latency tail comes
// from: a stalled event loop delays every call the process holds at that moment.
export interface ServiceStats {
  gcMs: number; majorGcMs: number; loopP99Ms: number; loopMaxMs: number;
  /** fan-out's transaction durations (cumulative count by bucket bound, seconds); empty elsewhere. */
  transactionBuckets: Map<number, number>;
}

export async function scrapeStats(url: string): Promise<ServiceStats> {
  const text = await (await fetch(`${url}/metrics`)).text();
  let gc = 0;
  let major = 0;
  let p99 = NaN;
  let max = NaN;
  const transactionBuckets = new Map<number, number>();
  for (const line of text.split('\n')) {
    if (line.startsWith('nodejs_gc_duration_seconds_sum')) {
      const v = Number(line.slice(line.lastIndexOf(' ') + 1));
      gc += v;
      if (line.includes('kind="major"')) major += v;
    } else if (line.startsWith('nodejs_eventloop_lag_p99_seconds')) p99 = Number(line.slice(line.lastIndexOf(' ') + 1));
    else if (line.startsWith('nodejs_eventloop_lag_max_seconds')) max = Number(line.slice(line.lastIndexOf(' ') + 1));
    else if (line.startsWith('fanout_transaction_seconds_bucket')) {
      const le = /le="([^"]+)"/.exec(line)?.[1];
      if (le) transactionBuckets.set(le === '+Inf' ? Infinity : Number(le), Number(line.slice(line.lastIndexOf(' ') + 1)));
    }
  }
  return { gcMs: gc * 1000, majorGcMs: major * 1000, loopP99Ms: p99 * 1000, loopMaxMs: max * 1000, transactionBuckets };
}

/** Per service over a window: GC ms (major in brackets) and event-loop lag p99/max ms, as one note. */
export function statsNote(before: ServiceStats, after: ServiceStats): string {
  const r = (n: number) => (Number.isFinite(n) ? Math.round(n) : n);
  const txn = after.transactionBuckets.size
    ? `, transaction p50/p99 ${r(bucketQuantile(before.transactionBuckets, after.transactionBuckets, 0.5) * 1000)}/${r(bucketQuantile(before.transactionBuckets, after.transactionBuckets, 0.99) * 1000)} ms`
    : '';
  return `gc ${r(after.gcMs - before.gcMs)} (major ${r(after.majorGcMs - before.majorGcMs)}) ms, loop p99/max ${r(after.loopP99Ms)}/${r(after.loopMaxMs)} ms${txn}`;
}

/** A quantile of a histogram's observations between two scrapes, interpolated within its bucket (as Prometheus's histogram_quantile). */
export function bucketQuantile(before: Map<number, number>, after: Map<number, number>, q: number): number {
  const bounds = [...after.keys()].sort((a, b) => a - b);
  const counts = bounds.map((b) => (after.get(b) ?? 0) - (before.get(b) ?? 0));
  const total = counts.at(-1) ?? 0;
  if (total <= 0) return NaN;
  const rank = q * total;
  for (let i = 0; i < bounds.length; i++) {
    if (counts[i]! < rank) continue;
    const lower = i === 0 ? 0 : bounds[i - 1]!;
    const below = i === 0 ? 0 : counts[i - 1]!;
    if (!Number.isFinite(bounds[i]!)) return lower;
    return lower + ((bounds[i]! - lower) * (rank - below)) / Math.max(1, counts[i]! - below);
  }
  return NaN;
}

/**
 * The sums of some counters or gauges over all their label sets, from a service's /metrics; a name
 * may carry one label to match, e.g. `delivery_attempts_total{status_class="skipped"}`.
 */
export async function scrapeSums(url: string, names: string[]): Promise<Record<string, number>> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const wanted = names.map((key) => { const i = key.indexOf('{'); return { key, name: i < 0 ? key : key.slice(0, i), label: i < 0 ? '' : key.slice(i + 1, -1) }; });
  const sums: Record<string, number> = Object.fromEntries(names.map((n) => [n, 0]));
  for (const line of text.split('\n')) {
    const end = line.search(/[{ ]/);
    const name = end < 0 ? line : line.slice(0, end);
    for (const w of wanted) if (w.name === name && (!w.label || line.includes(w.label))) sums[w.key]! += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return sums;
}

/** One line a service logged (pino JSON): what it says (message, outcome, error), when, and a summary line's count by reason. */
export interface ServiceLogLine { key: string; at: number; byReason?: Record<string, number> }

/** Parses a service's log line; a line that is not JSON is its own key, with no time. */
export function parseServiceLogLine(line: string): ServiceLogLine {
  let j: { time?: string; msg?: string; outcome?: string; error?: string; err?: { message?: string }; byReason?: Record<string, number> };
  try { j = JSON.parse(line) as typeof j; } catch { return { key: line.slice(0, 200), at: NaN }; }
  return { key: [j.msg, j.outcome, j.error, j.err?.message].filter(Boolean).join(': '), at: Date.parse(j.time ?? ''), ...(j.byReason ? { byReason: j.byReason } : {}) };
}
