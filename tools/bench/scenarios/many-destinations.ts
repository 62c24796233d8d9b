// Many destinations: a pipeline configured with D destinations (100, 2 000, 20 000 in a full run)
// of D ÷ 2 sources, 1 to 5 URLs each, and the load spread over the first 1 000 of them by a Zipf
// law (rank r drawn with weight 1 ÷ r), 5 % of those never answering. Per level: how long each
// service takes to be ready with that configuration, the healthy destinations' delivered tasks/s
// at saturation, each service's CPU per event and RSS after, fan-out's and delivery's /metrics (size
// and scrape time), and how long a destination created or changed takes to be used (from the config
// write to the first request at its new URL).
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Destination, Source } from '@switchyard/platform/config-view/config-state';
import { basicAuth } from '../chain.js';
import { log, type BenchContext } from '../context.js';
import { quantile, runLoad, trackCall, type LoadRequest } from '../load.js';
import { makeDestination, makeSource, Pipeline, rssMb } from '../pipeline.js';
import { messageIdOf } from '../receiver.js';
import { round, type Row } from '../report.js';
import { scrapeSums } from '../service-stats.js';
import { seeded } from '../../seeded-random.js';
import { processCpuMs } from '../cpu-time.js';

/** Destinations the load goes to (the first ones configured), by a Zipf law over their rank. */
const ACTIVE = 1000;
/** One active destination in this many never answers (5 %). */
const HANG_EVERY = 20;
/** Healthy receiver servers (origins) the URLs are spread over. */
const RECEIVER_SERVERS = 20;
const SERVICES = ['ingest', 'fanout', 'delivery'] as const;
/** Targets of the shape: ready within, RSS of fan-out and delivery at most, a change used within (p99). */
const READY_S = 10;
const RSS_MB = 400;
const CHANGE_P99_MS = 1000;
/** Targets of fan-out's and delivery's /metrics with that configuration: its size, and how soon a scrape is answered. */
const METRICS_BYTES = 1 << 20;
const METRICS_MS = 50;
/** Scrapes of each service's /metrics after the load (its per-destination series at their most). */
const METRICS_SCRAPES = 10;

/** Receivers for many destinations: URL paths /d/<destinationId>/<k>; the first 2xx per destination and messageId, and per path. */
class ManyReceivers {
  readonly arrivals = new Map<string, number>();
  readonly firstByPath = new Map<string, number>();
  /** When each 2xx answer was given since the current load began (every URL of a task gets the request: docs/decisions/0006-multiple-urls-per-destination.md). */
  answeredAt: number[] = [];
  private readonly servers: Server[] = [];
  private readonly hung = new Set<ServerResponse>();
  origins: string[] = [];
  hangOrigin = '';

  async start(): Promise<void> {
    const healthy = (req: IncomingMessage, res: ServerResponse) => {
      let text = '';
      req.setEncoding('utf8');
      req.on('data', (c: string) => { text += c; });
      req.on('end', () => {
        const now = Date.now();
        const path = req.url ?? '';
        const id = messageIdOf(text);
        const key = `${path.split('/')[2]}|${id}`;
        if (!this.arrivals.has(key)) this.arrivals.set(key, now);
        if (!this.firstByPath.has(path)) this.firstByPath.set(path, now);
        this.answeredAt.push(now);
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': '11' }).end('{"ok":true}');
      });
    };
    const hang = (_req: IncomingMessage, res: ServerResponse) => { this.hung.add(res); res.on('close', () => this.hung.delete(res)); };
    for (let i = 0; i <= RECEIVER_SERVERS; i++) {
      const server = createServer({ keepAlive: true }, i < RECEIVER_SERVERS ? healthy : hang);
      server.keepAliveTimeout = 60_000;
      server.requestTimeout = 0;
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      this.servers.push(server);
      const origin = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
      if (i < RECEIVER_SERVERS) this.origins.push(origin); else this.hangOrigin = origin;
    }
  }

  async close(): Promise<void> {
    for (const res of this.hung) res.destroy();
    await Promise.all(this.servers.map((s) => new Promise<void>((resolve) => { s.closeAllConnections(); s.close(() => resolve()); })));
  }
}

/** Draws ranks 0 … n − 1 with weight 1 ÷ (rank + 1). */
export function zipf(n: number, next: () => number): () => number {
  const cumulative = new Float64Array(n);
  let sum = 0;
  for (let r = 0; r < n; r++) cumulative[r] = sum += 1 / (r + 1);
  return () => {
    const x = next() * sum;
    let lo = 0;
    let hi = n - 1;
    while (lo < hi) { const mid = (lo + hi) >> 1; if (cumulative[mid]! < x) lo = mid + 1; else hi = mid; }
    return lo;
  };
}

interface Topology { sources: Source[]; destinations: Destination[]; hanging: Set<string>; active: Destination[] }

/** D destinations of D ÷ 2 sources (two each), destination i with 1 + i mod 5 URLs; every HANG_EVERY-th active one points at the server that never answers. */
function topology(count: number, rx: ManyReceivers): Topology {
  const sources = Array.from({ length: Math.ceil(count / 2) }, () => makeSource());
  const hanging = new Set<string>();
  const destinations = Array.from({ length: count }, (_, i) => {
    const d = makeDestination(sources[i >> 1]!.id, []);
    const hang = i < ACTIVE && i % HANG_EVERY === HANG_EVERY - 1;
    if (hang) hanging.add(d.id);
    d.webhooks = Array.from({ length: 1 + (i % 5) }, (_, k) => ({ url: `${hang ? rx.hangOrigin : rx.origins[(i * 5 + k) % RECEIVER_SERVERS]}/d/${d.id}/${k}`, headers: {}, clientCertificate: null }));
    return d;
  });
  return { sources, destinations, hanging, active: destinations.slice(0, ACTIVE) };
}

/**
 * Requests of `size` events, each from the source of a destination drawn by the Zipf law; the healthy
 * tasks they make (destination|messageId), and the deliveries those make (one POST per URL of each).
 */
function zipfLoad(t: Topology, runId: string, label: string, requests: number, size: number, seed: number) {
  const draw = zipf(t.active.length, seeded(seed));
  const bySource = new Map<string, Destination[]>();
  for (const d of t.destinations) { const of = bySource.get(d.sourceId); if (of) of.push(d); else bySource.set(d.sourceId, [d]); }
  const sources = new Map(t.sources.map((s) => [s.id, s]));
  const healthy: string[] = [];
  let deliveries = 0;
  const reqs: LoadRequest[] = Array.from({ length: requests }, () => {
    const src = sources.get(t.active[draw()]!.sourceId)!;
    const calls = Array.from({ length: size }, () => trackCall(runId, label));
    for (const d of bySource.get(src.id)!) {
      if (t.hanging.has(d.id)) continue;
      for (const c of calls) healthy.push(`${d.id}|${c.id}`);
      deliveries += calls.length * d.webhooks.length;
    }
    return { body: JSON.stringify({ batch: calls.map((c) => c.call) }), ids: calls.map((c) => c.id), headers: basicAuth(src) };
  });
  return { reqs, healthy, deliveries };
}

/** Waits for every healthy task's first arrival and for `deliveries` answers since the load began. */
async function waitFor(rx: ManyReceivers, keys: string[], deliveries: number, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  let i = 0;
  for (;;) {
    while (i < keys.length && rx.arrivals.has(keys[i]!)) i++;
    if (i === keys.length && rx.answeredAt.length >= deliveries) return true;
    if (Date.now() > deadline) return false;
    await new Promise((r) => setTimeout(r, 20));
  }
}

interface Level {
  destinations: number; readyS: Record<string, number>; configWriteS: number; deliveriesPerS: number; tasksPerS: number; ok: boolean;
  cpuUsPerEvent: Record<string, number>; rss: Record<string, number>; heap: Record<string, string>; changeMs: number[]; changesOk: boolean;
  metrics: Record<string, MetricsScrapes>;
}

/** A service's /metrics as Prometheus gets it: the body's size, and each scrape's time from request to last byte. */
interface MetricsScrapes { bytes: number; ms: number[] }

async function scrapeMetrics(url: string): Promise<MetricsScrapes> {
  const ms: number[] = [];
  let bytes = 0;
  for (let i = 0; i < METRICS_SCRAPES; i++) {
    const t0 = performance.now();
    bytes = (await (await fetch(`${url}/metrics`)).arrayBuffer()).byteLength;
    ms.push(performance.now() - t0);
  }
  return { bytes, ms };
}

/** V8's heap (used/total), its new space (used) and memory outside it (external), MB, from a service's default metrics: what the RSS is made of. */
async function heapOf(url: string): Promise<string> {
  const m = await scrapeSums(url, ['nodejs_heap_size_used_bytes', 'nodejs_heap_size_total_bytes', 'nodejs_external_memory_bytes', 'nodejs_heap_space_size_used_bytes{space="new"}']);
  const mb = (k: string) => round(m[k]! / 2 ** 20);
  return `heap ${mb('nodejs_heap_size_used_bytes')}/${mb('nodejs_heap_size_total_bytes')}, new space ${mb('nodejs_heap_space_size_used_bytes{space="new"}')}, external ${mb('nodejs_external_memory_bytes')}`;
}

async function measureLevel(ctx: BenchContext, rx: ManyReceivers, count: number): Promise<Level> {
  const { s, ref, base, serviceEnv, runId, brokerPids } = ctx;
  const p = new Pipeline(ref, `${base}many${count}.`, { ...serviceEnv, SWITCHYARD_PARTITIONS: '3', SWITCHYARD_RETRY_TIERS: '10s,1m' }, ctx.code);
  await p.setup();
  const t = topology(count, rx);
  const w0 = Date.now();
  await p.writeConfig(t.sources, t.destinations);
  const configWriteS = (Date.now() - w0) / 1000;
  try {
    const readyS: Record<string, number> = {};
    await Promise.all(SERVICES.map(async (name) => { const t0 = Date.now(); await p.start(name); readyS[name] = (Date.now() - t0) / 1000; }));
    const ingest = p.instances('ingest')[0]!;
    const requests = Math.ceil(s.manyEvents / s.batchSize);
    const saturate = async (label: string, n: number, seed: number) => {
      const { reqs, healthy, deliveries } = zipfLoad(t, runId, label, n, s.batchSize, seed);
      const pids = [...p.services.map((x) => x.proc.child.pid), ...brokerPids];
      const cpu0 = pids.map((pid) => processCpuMs(pid));
      rx.answeredAt = [];
      const res = await runLoad({ origin: ingest.url, path: '/v1/batch', requests: reqs, concurrency: s.ingestConcurrency });
      const ok = (await waitFor(rx, healthy, deliveries, s.deliverTimeoutMs)) && res.errors === 0;
      const lastTask = Math.max(...healthy.map((k) => rx.arrivals.get(k) ?? 0));
      // The answer that completed the deliveries expected (a re-send, if there was one, counts as one of them).
      const delivered = Math.min(deliveries, rx.answeredAt.length);
      const lastDelivery = rx.answeredAt[delivered - 1] ?? lastTask;
      const events = n * s.batchSize;
      const names = [...p.services.map((x) => x.name), ...brokerPids.map(() => 'broker')];
      const cpuUsPerEvent = Object.fromEntries(names.map((name, i) => [name, ((processCpuMs(pids[i]) - cpu0[i]!) * 1000) / events]));
      return {
        deliveriesPerS: delivered / ((lastDelivery - res.startedAt) / 1000),
        tasksPerS: healthy.filter((k) => rx.arrivals.has(k)).length / ((lastTask - res.startedAt) / 1000),
        ok, cpuUsPerEvent,
      };
    };
    await saturate(`many${count}-warm`, Math.ceil(requests / 4), 7); // JIT, connections, breakers of the hanging ones opened
    const m = await saturate(`many${count}`, requests, 11);
    const rss = Object.fromEntries(p.services.map((x) => [x.name, rssMb(x.proc.child.pid)]));
    const heap = Object.fromEntries(await Promise.all(p.services.filter((x) => x.name !== 'ingest').map(async (x) => [x.name, await heapOf(x.url)] as const)));
    // One service at a time, as two Prometheus targets would rarely be scraped at the same instant.
    const metrics: Record<string, MetricsScrapes> = {};
    for (const x of p.services.filter((y) => y.name !== 'ingest')) metrics[x.name] = await scrapeMetrics(x.url);
    const changes = await measureChanges(ctx, p, rx, t, ingest.url);
    return { destinations: count, readyS, configWriteS, deliveriesPerS: m.deliveriesPerS, tasksPerS: m.tasksPerS, ok: m.ok, cpuUsPerEvent: m.cpuUsPerEvent, rss, heap, changeMs: changes.ms, changesOk: changes.ok, metrics };
  } finally {
    await p.stopAll();
  }
}

/**
 * Destinations created (even samples) or given a new URL (odd samples), one at a time, while one
 * call every CALL_EVERY_MS goes to the source: from the config write to the first request at the new URL.
 */
async function measureChanges(ctx: BenchContext, p: Pipeline, rx: ManyReceivers, t: Topology, ingestUrl: string): Promise<{ ms: number[]; ok: boolean }> {
  const CALL_EVERY_MS = 10;
  const healthy = t.active.filter((d) => !t.hanging.has(d.id));
  const sources = new Map(t.sources.map((s) => [s.id, s]));
  const ms: number[] = [];
  let ok = true;
  for (let j = 0; j < ctx.s.manyChanges; j++) {
    const d = healthy[(j * 37) % healthy.length]!;
    const src = sources.get(d.sourceId)!;
    const origin = rx.origins[j % RECEIVER_SERVERS]!;
    const created = j % 2 === 0 ? makeDestination(src.id, []) : undefined;
    const changed: Destination = created ?? { ...d, updatedAt: Date.now() };
    const path = `/d/${changed.id}/new${j}`;
    changed.webhooks = [{ url: `${origin}${path}`, headers: {}, clientCertificate: null }];
    const t0 = Date.now();
    await p.writeConfig([], [changed]);
    const deadline = t0 + 10_000;
    while (!rx.firstByPath.has(path) && Date.now() < deadline) {
      const { call } = trackCall(ctx.runId, `change${j}`);
      void fetch(`${ingestUrl}/v1/track`, { method: 'POST', headers: { 'content-type': 'application/json', ...basicAuth(src) }, body: JSON.stringify(call) }).then((r) => r.arrayBuffer(), () => undefined);
      await new Promise((r) => setTimeout(r, CALL_EVERY_MS));
    }
    const at = rx.firstByPath.get(path);
    if (at === undefined) ok = false;
    ms.push((at ?? deadline) - t0);
  }
  return { ms, ok };
}

export async function manyDestinations(ctx: BenchContext, eRate: number): Promise<Row[]> {
  const { s } = ctx;
  const rx = new ManyReceivers();
  await rx.start();
  const levels: Level[] = [];
  try {
    for (const count of s.manyLevels) {
      log(`many destinations: ${count} destinations of ${Math.ceil(count / 2)} sources, ${s.manyEvents} events over ${Math.min(ACTIVE, count)} by a Zipf law (5 % never answer), then ${s.manyChanges} changes`);
      levels.push(await measureLevel(ctx, rx, count));
    }
  } finally {
    await rx.close();
  }
  const top = levels.at(-1)!;
  const slowestReady = Math.max(...Object.values(top.readyS));
  const rssTop = Math.max(top.rss.fanout ?? NaN, top.rss.delivery ?? NaN);
  const changeP99 = quantile(top.changeMs, 0.99);
  const name = `${top.destinations} destinations`;
  // The slowest service's median scrape, and its largest body.
  const metricsMs = Math.max(...Object.values(top.metrics).map((m) => quantile(m.ms, 0.5)));
  const metricsBytes = Math.max(...Object.values(top.metrics).map((m) => m.bytes));
  const metricsNote = (l: Level) => Object.entries(l.metrics).map(([k, m]) => `${k} ${round(m.bytes / 1024)} KB ${round(quantile(m.ms, 0.5), 1)}/${round(Math.max(...m.ms), 1)} ms`).join(', ');
  const cpuNote = (l: Level) => Object.entries(l.cpuUsPerEvent).map(([k, v]) => `${k} ${round(v)}`).join(', ');
  return [
    {
      // A delivery is one POST to one URL (docs/decisions/0022-many-destinations-counts-deliveries.md): a
      // task makes one per URL of its destination (1 to 5 here), end to end's task one.
      scenario: `many destinations: healthy delivered/s, ${name}, 5 % never answer`, value: top.deliveriesPerS, unit: 'deliveries/s', baseline: { name: 'end to end (one URL)', value: eRate },
      ratio: top.deliveriesPerS / eRate, target: '≥ 0.9', met: top.deliveriesPerS / eRate >= 0.9, verified: top.ok,
      details: {
        events: s.manyEvents, active: Math.min(ACTIVE, top.destinations), deliveriesByLevel: levels.map((l) => `${l.destinations}: ${round(l.deliveriesPerS)}`).join(', '),
        tasksPerS: round(top.tasksPerS), tasksVsEndToEnd: round(top.tasksPerS / eRate, 2),
        note: 'two destinations per source: two tasks per event',
      },
      rssMb: {},
    },
    {
      scenario: `many destinations: fan-out and delivery RSS, ${name}`, value: rssTop, unit: 'MB', ratio: rssTop / RSS_MB, target: `≤ ${RSS_MB} MB each`, met: rssTop <= RSS_MB, verified: top.ok,
      details: { note: 'after the load; ratio: ÷ the target', ...top.heap }, rssMb: top.rss,
    },
    {
      scenario: `many destinations: a destination created or changed is used, ${name}`, value: changeP99, unit: 'ms p99', ratio: changeP99 / CHANGE_P99_MS, target: `p99 ≤ ${CHANGE_P99_MS} ms`, met: top.changesOk && changeP99 <= CHANGE_P99_MS, verified: top.changesOk,
      details: { samples: top.changeMs.length, p50ms: quantile(top.changeMs, 0.5), maxMs: Math.max(...top.changeMs), byLevelP50P99: levels.map((l) => `${l.destinations}: ${quantile(l.changeMs, 0.5)}/${quantile(l.changeMs, 0.99)}`).join(', '), note: 'config write → first request at the new URL, a call every 10 ms; ratio: ÷ the target' },
      rssMb: {},
    },
    {
      scenario: `many destinations: fan-out and delivery /metrics, ${name}`, value: metricsMs, unit: 'ms median', ratio: metricsMs / METRICS_MS,
      target: `≤ ${METRICS_MS} ms and ≤ ${METRICS_BYTES / 2 ** 20} MB each`, met: metricsMs <= METRICS_MS && metricsBytes <= METRICS_BYTES, verified: top.ok,
      details: {
        ...Object.fromEntries(Object.entries(top.metrics).map(([k, m]) => [k, `${round(m.bytes / 1024)} KB, median/max ${round(quantile(m.ms, 0.5), 1)}/${round(Math.max(...m.ms), 1)} ms`])),
        byLevel: levels.map((l) => `${l.destinations}: ${metricsNote(l)}`).join('; '),
        note: `after the load, ${METRICS_SCRAPES} scrapes of each (request to last byte); SWITCHYARD_METRICS_DESTINATIONS and _SOURCES at their default (top:100, docs/decisions/0023-bounded-metric-labels.md); ratio: ÷ the time target`,
      },
      rssMb: {},
    },
    {
      scenario: `many destinations: ready after start, ${name}`, value: slowestReady, unit: 's', ratio: slowestReady / READY_S, target: `≤ ${READY_S} s each`, met: slowestReady <= READY_S, verified: true,
      details: { ...Object.fromEntries(Object.entries(top.readyS).map(([k, v]) => [k, `${round(v, 1)} s`])), configRecords: top.destinations + Math.ceil(top.destinations / 2), configWriteS: round(top.configWriteS, 1), note: 'spawn → /readyz answers 200; ratio: ÷ the target' },
      rssMb: {},
    },
    ...levels.map((l): Row => ({
      scenario: `many destinations: memory and CPU at ${l.destinations} destinations`, value: Object.values(l.cpuUsPerEvent).reduce((a, v) => a + v, 0), unit: 'µs CPU/event', verified: l.ok,
      details: { cpuUsPerEvent: cpuNote(l), deliveriesPerS: round(l.deliveriesPerS), tasksPerS: round(l.tasksPerS), readyS: Object.entries(l.readyS).map(([k, v]) => `${k} ${round(v, 1)}`).join(', '), changeP50P99Ms: `${quantile(l.changeMs, 0.5)}/${quantile(l.changeMs, 0.99)}`, ...l.heap },
      rssMb: l.rss,
    })),
  ];
}
