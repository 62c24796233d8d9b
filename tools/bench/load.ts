// The benchmark's HTTP load generator: undici Pool (keep-alive, one connection per concurrent
// request), bounded concurrency, either as fast as answers come back (closed loop) or paced at a
// fixed request rate (open loop, still bounded). Bodies are prepared before the clock starts.
import { Pool } from 'undici';

export interface LoadRequest {
  body: string;
  /** messageIds the body carries; each is stamped with the time its 2xx answer arrived. */
  ids: string[];
  /** Headers of this request only (a source's write key), over the load's. */
  headers?: Record<string, string>;
}

export interface LoadOptions {
  /** Origin, e.g. http://127.0.0.1:8080 */
  origin: string;
  path: string;
  headers?: Record<string, string>;
  requests: LoadRequest[];
  concurrency: number;
  /** Open loop: request i starts no earlier than start + i × intervalMs. */
  intervalMs?: number;
}

export interface LoadResult {
  startedAt: number;
  endedAt: number;
  /** Acknowledgement latency per request, ms (2xx only). */
  latencies: number[];
  /** Time the 2xx answer arrived, per messageId. */
  acks: Map<string, number>;
  /** Non-2xx answers and transport errors (not retried: a run with errors is reported as such). */
  errors: number;
  firstError?: string;
  /** CPU time this process used during the run (user + system), ms. */
  cpuMs: number;
}

export async function runLoad(opts: LoadOptions): Promise<LoadResult> {
  const pool = new Pool(opts.origin, { connections: opts.concurrency, pipelining: 1, keepAliveTimeout: 30_000 });
  const headers = { 'content-type': 'application/json', ...opts.headers };
  const latencies: number[] = [];
  const acks = new Map<string, number>();
  let errors = 0;
  let firstError: string | undefined;
  let next = 0;
  const cpu0 = process.cpuUsage();
  const startedAt = Date.now();
  const worker = async () => {
    for (;;) {
      const i = next++;
      if (i >= opts.requests.length) return;
      if (opts.intervalMs) {
        const due = startedAt + i * opts.intervalMs;
        const wait = due - Date.now();
        if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      }
      const req = opts.requests[i]!;
      const t0 = performance.now();
      try {
        const res = await pool.request({ path: opts.path, method: 'POST', headers: req.headers ? { ...headers, ...req.headers } : headers, body: req.body });
        const text = await res.body.text();
        if (res.statusCode >= 200 && res.statusCode < 300) {
          const now = Date.now();
          latencies.push(performance.now() - t0);
          for (const id of req.ids) acks.set(id, now);
        } else {
          errors++;
          firstError ??= `${res.statusCode} ${text.slice(0, 200)}`;
        }
      } catch (err) {
        errors++;
        firstError ??= (err as Error).message;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(opts.concurrency, opts.requests.length) }, worker));
  const endedAt = Date.now();
  const cpu = process.cpuUsage(cpu0);
  await pool.close();
  return { startedAt, endedAt, latencies, acks, errors, firstError, cpuMs: (cpu.user + cpu.system) / 1000 };
}

/** The q-quantile (0..1) of values, nearest rank; NaN when empty. */
export function quantile(values: number[], q: number): number {
  if (values.length === 0) return NaN;
  const sorted = Float64Array.from(values).sort();
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[rank]!;
}

/** The median; NaN when empty. Ratio rows report the median of paired rounds: single runs on a shared machine move by ±20 %. */
export function median(values: number[]): number {
  if (values.length === 0) return NaN;
  const v = Float64Array.from(values).sort();
  const mid = v.length >> 1;
  return v.length % 2 ? v[mid]! : (v[mid - 1]! + v[mid]!) / 2;
}

let seq = 0;
/** A track call of realistic size (~400 bytes as JSON) with a messageId the run can follow. */
export function trackCall(runId: string, label: string): { id: string; call: Record<string, unknown> } {
  const n = seq++;
  const id = `${runId}-${label}-${n}`;
  return {
    id,
    call: {
      type: 'track', messageId: id, userId: `user-${n % 997}`, event: 'Order Completed',
      properties: { orderId: `o-${n}`, revenue: 42.5, currency: 'EUR', products: [{ sku: 'sku-1', qty: 2 }, { sku: 'sku-2', qty: 1 }], coupon: null },
      context: { library: { name: 'switchyard-bench', version: '1.0' }, ip: '203.0.113.9', locale: 'en-GB' },
      timestamp: new Date().toISOString(),
    },
  };
}

/** Batch requests for /v1/batch: `requests` bodies of `batchSize` calls each. */
export function batchRequests(runId: string, label: string, requests: number, batchSize: number): LoadRequest[] {
  return Array.from({ length: requests }, () => {
    const calls = Array.from({ length: batchSize }, () => trackCall(runId, label));
    return { body: JSON.stringify({ batch: calls.map((c) => c.call), sentAt: new Date().toISOString() }), ids: calls.map((c) => c.id) };
  });
}

/** One track call per request, for POST /v1/track, as a browser sends it. */
export function singleCallRequests(runId: string, label: string, requests: number): LoadRequest[] {
  return Array.from({ length: requests }, () => {
    const { call, id } = trackCall(runId, label);
    return { body: JSON.stringify({ ...call, sentAt: new Date().toISOString() }), ids: [id] };
  });
}
