// What a service's own metrics say about a load window: time spent in garbage collection and how
// late its event loop ran (prom-client's default metrics; the event-loop histogram is reset at each
// scrape, so a scrape before the load and one after bound the window). Where a latency tail comes
// from: a stalled event loop delays every call the process holds at that moment.
export interface ServiceStats { gcMs: number; majorGcMs: number; loopP99Ms: number; loopMaxMs: number }

export async function scrapeStats(url: string): Promise<ServiceStats> {
  const text = await (await fetch(`${url}/metrics`)).text();
  let gc = 0;
  let major = 0;
  let p99 = NaN;
  let max = NaN;
  for (const line of text.split('\n')) {
    if (line.startsWith('nodejs_gc_duration_seconds_sum')) {
      const v = Number(line.slice(line.lastIndexOf(' ') + 1));
      gc += v;
      if (line.includes('kind="major"')) major += v;
    } else if (line.startsWith('nodejs_eventloop_lag_p99_seconds')) p99 = Number(line.slice(line.lastIndexOf(' ') + 1));
    else if (line.startsWith('nodejs_eventloop_lag_max_seconds')) max = Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return { gcMs: gc * 1000, majorGcMs: major * 1000, loopP99Ms: p99 * 1000, loopMaxMs: max * 1000 };
}

/** Per service over a window: GC ms (major in brackets) and event-loop lag p99/max ms, as one note. */
export function statsNote(before: ServiceStats, after: ServiceStats): string {
  const r = (n: number) => (Number.isFinite(n) ? Math.round(n) : n);
  return `gc ${r(after.gcMs - before.gcMs)} (major ${r(after.majorGcMs - before.majorGcMs)}) ms, loop p99/max ${r(after.loopP99Ms)}/${r(after.loopMaxMs)} ms`;
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
