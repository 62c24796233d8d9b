// Idle: the stack as `npm start` runs it (every service at its defaults, one source and one webhooks
// destination) with no traffic. Each process's CPU over a window (60 s in a full run) — the services,
// the broker and the registry — and then the first call after it, one call per request, from
// ingest's 200 to the webhook. Runs first, on the fresh broker, before other pipelines add topics.
// The window starts a while after the warm-up call (sizes.ts, idleSettleSeconds): a broker's JIT
// compiles for minutes after it starts (2-3 % of a core of C2 compiler threads at 3 min, with no
// traffic), which is a fresh broker's cost, not the stack's idle one.
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { basicAuth } from '../chain.js';
import { log, type BenchContext } from '../context.js';
import { runLoad, singleCallRequests } from '../load.js';
import { makeDestination, makeSource, Pipeline } from '../pipeline.js';
import { round, type Row } from '../report.js';
import { processCpuMs } from '../cpu-time.js';

/** The services `npm start` runs (tools/stack/layout.ts), one instance each. */
const SERVICES = ['ingest', 'fanout', 'delivery', 'control', 'audiences'] as const;
/** Targets: the whole stack, and each service alone, as a share of one core. */
export const IDLE_TOTAL_CORES = 0.12;
export const IDLE_SERVICE_CORES = 0.015;
export const FIRST_CALL_MS = 150;

export async function idle(ctx: BenchContext): Promise<Row[]> {
  const { s, ref, base, serviceEnv, runId, brokerPids, registryPid } = ctx;
  const p = new Pipeline(ref, `${base}idle.`, { ...serviceEnv, LOG_LEVEL: 'info', SWITCHYARD_ADMIN_TOKEN: randomBytes(24).toString('base64url') }, ctx.code);
  log(`idle: the npm start services, no traffic for ${s.idleSeconds} s, then one call`);
  await p.setup();
  const r = await ctx.receiver();
  const src = makeSource();
  await p.writeConfig([src], [makeDestination(src.id, [r.url])]);
  try {
    await Promise.all(SERVICES.map((name) => p.start(name)));
    const ingest = p.instances('ingest')[0]!;
    const call = async (label: string) => {
      const reqs = singleCallRequests(runId, label, 1);
      const res = await runLoad({ origin: ingest.url, path: '/v1/track', headers: basicAuth(src), requests: reqs, concurrency: 1 });
      const id = reqs[0]!.ids[0]!;
      const ok = await r.waitForAll([id], s.deliverTimeoutMs).then(() => res.errors === 0, () => false);
      const ms = (r.arrivals.get(id) ?? NaN) - (res.acks.get(id) ?? NaN);
      r.reset();
      return { ok, ms };
    };
    const warm = await call('idle-warm');
    await sleep(s.idleSettleSeconds * 1000);
    const processes = [
      ...p.services.map((x) => ({ name: x.name, pid: x.proc.child.pid })),
      ...brokerPids.map((pid, i) => ({ name: brokerPids.length > 1 ? `broker${i + 1}` : 'broker', pid })),
      ...(registryPid ? [{ name: 'registry', pid: registryPid }] : []),
    ];
    const cpu0 = processes.map((x) => processCpuMs(x.pid));
    const t0 = Date.now();
    await sleep(s.idleSeconds * 1000);
    const cores = processes.map((x, i) => (processCpuMs(x.pid) - cpu0[i]!) / (Date.now() - t0));
    const first = await call('idle-first');
    const total = cores.reduce((a, c) => a + c, 0);
    const services = processes.flatMap((x, i) => (SERVICES.includes(x.name as (typeof SERVICES)[number]) ? [cores[i]!] : []));
    const busiest = Math.max(...services);
    const perProcess = processes.map((x, i) => `${x.name} ${round(cores[i]! * 100, 1)}%`).join(', ');
    return [
      {
        scenario: `idle: CPU over ${s.idleSeconds} s, no traffic`, value: total, unit: 'cores', ratio: total / IDLE_TOTAL_CORES,
        target: `≤ ${IDLE_TOTAL_CORES} cores, each service ≤ ${IDLE_SERVICE_CORES * 100} %`, met: total <= IDLE_TOTAL_CORES && busiest <= IDLE_SERVICE_CORES, verified: warm.ok,
        details: { perProcess, busiestService: `${round(busiest * 100, 1)}%`, note: 'ratio: total ÷ the target' },
        rssMb: {},
      },
      {
        scenario: `idle: first call after ${s.idleSeconds} s`, value: first.ms, unit: 'ms', ratio: first.ms / FIRST_CALL_MS,
        target: `≤ ${FIRST_CALL_MS} ms`, met: first.ok && first.ms <= FIRST_CALL_MS, verified: first.ok,
        details: { warmUpCallMs: round(warm.ms), note: 'one call per request, from ingest\'s 200 to the webhook; ratio: ÷ the target' },
        rssMb: {},
      },
    ];
  } finally {
    await p.stopAll();
  }
}
