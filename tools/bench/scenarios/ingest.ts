// Baseline (c) and ingest only: a bare node:http → Kafka process (bare-ingest.ts) and ingest under
// the same load, in paired rounds, each load verified by its topic's record count. The ingest row
// compares CPU time per event (each process's /proc/<pid>/stat over its load): steadier than rates
// on a shared machine; the rates and their ratio are in its notes.
import type { Chain } from '../chain.js';
import { basicAuth } from '../chain.js';
import { log, type BenchContext } from '../context.js';
import { batchRequests, median, quantile, runLoad } from '../load.js';
import { processCpuMs } from '../cpu-time.js';
import { rawKafka, rssMb, startBareIngest } from '../pipeline.js';
import { round, type Row } from '../report.js';

/** The rows of (c) and ingest, and (c)'s CPU per event (a part of the end-to-end ceiling). */
export async function ingestScenario(ctx: BenchContext, chain: Chain): Promise<{ rows: Row[]; cUsPerEvent: number }> {
  const { ref, s, runId, base, cleanups } = ctx;
  const { p1, sIngest } = chain;
  const admin = rawKafka(ref, 'bench-admin').admin();
  await admin.connect();
  cleanups.push(() => admin.disconnect());
  const count = async (topic: string) => (await admin.fetchTopicOffsets(topic)).reduce((n, p) => n + Number(p.high), 0);
  const ingestLoad = (origin: string, label: string) => runLoad({ origin, path: '/v1/batch', headers: basicAuth(sIngest), requests: batchRequests(runId, label, s.ingestRequests, s.batchSize), concurrency: s.ingestConcurrency });
  await admin.createTopics({ topics: [{ topic: `${base}bare`, numPartitions: 3 }], waitForLeaders: true });
  const bare = await startBareIngest(ref, `${base}bare`, sIngest.writeKeys[0]!);
  cleanups.push(() => bare.stop());
  const ingest = await chain.ingestStarting!;
  // Warm-ups (JIT, connections) — not measured.
  await ingestLoad(bare.url, 'warm-c');
  await ingestLoad(ingest.url, 'warm-i');
  const cEvents = s.ingestRequests * s.batchSize;
  /** One measured load and the serving process's CPU per event over it; verified by the topic's record count growing by exactly the events sent. */
  const measure = async (origin: string, pid: number | undefined, topic: string, label: string) => {
    const before = await count(topic);
    const cpu0 = processCpuMs(pid);
    const res = await ingestLoad(origin, label);
    const usPerEvent = ((processCpuMs(pid) - cpu0) * 1000) / cEvents;
    return { res, rate: cEvents / ((res.endedAt - res.startedAt) / 1000), usPerEvent, verified: (await count(topic)) - before === cEvents && res.errors === 0 };
  };
  const measureC = (k: number) => measure(bare.url, bare.child.pid, `${base}bare`, `bare${k}`);
  const measureI = (k: number) => measure(ingest.url, ingest.proc.child.pid, p1.topics.ingest, `ingest${k}`);
  log(`baseline (c) and ingest only, ${s.rounds} paired round(s): ${s.ingestRequests} × ${s.batchSize} events, concurrency ${s.ingestConcurrency}`);
  const rounds: Array<{ c: Awaited<ReturnType<typeof measure>>; i: Awaited<ReturnType<typeof measure>> }> = [];
  for (let k = 0; k < s.rounds; k++) {
    // Alternate which goes first, so a drift in the machine's speed does not favour either side.
    const cFirst = k % 2 === 0;
    const first = await (cFirst ? measureC(k) : measureI(k));
    const second = await (cFirst ? measureI(k) : measureC(k));
    rounds.push(cFirst ? { c: first, i: second } : { c: second, i: first });
  }
  const bareRss = rssMb(bare.child.pid);
  await bare.stop();
  const rateRatios = rounds.map((r) => r.i.rate / r.c.rate);
  const cpuRatios = rounds.map((r) => r.i.usPerEvent / r.c.usPerEvent);
  const ratio = median(cpuRatios);
  const cRate = median(rounds.map((r) => r.c.rate));
  const cUsPerEvent = median(rounds.map((r) => r.c.usPerEvent));
  const cAll = rounds.map((r) => r.c.res.latencies).flat();
  const iAll = rounds.map((r) => r.i.res.latencies).flat();
  const firstError = rounds.find((r) => r.i.res.firstError)?.i.res.firstError;
  const rateRatio = median(rateRatios);
  return {
    cUsPerEvent,
    rows: [
      { scenario: 'baseline (c) bare http→Kafka', value: cRate, unit: 'events/s', verified: rounds.every((r) => r.c.verified), details: { cpuUsPerEvent: cUsPerEvent, p50ms: quantile(cAll, 0.5), p99ms: quantile(cAll, 0.99), rss: bareRss }, rssMb: {} },
      {
        scenario: 'ingest only', value: median(rounds.map((r) => r.i.usPerEvent)), unit: 'µs/event', baseline: { name: '(c)', value: cUsPerEvent }, ratio, target: '≤ 1.2 × (c)', met: ratio <= 1.2, verified: rounds.every((r) => r.i.verified),
        details: {
          roundRatios: cpuRatios.map((x) => round(x, 2)).join('/'), roundUs: rounds.map((r) => `${round(r.i.usPerEvent)}/${round(r.c.usPerEvent)}`).join(', '),
          // The rates, as this row compared before (target ≥ 0.8 × (c)).
          eventsPerS: median(rounds.map((r) => r.i.rate)), cEventsPerS: cRate, rateRatio, roundRateRatios: rateRatios.map((x) => round(x, 2)).join('/'), rateMet: rateRatio >= 0.8 ? 'yes' : 'no',
          p50ms: quantile(iAll, 0.5), p99ms: quantile(iAll, 0.99), benchCpu: rounds[0]!.i.res.cpuMs / (rounds[0]!.i.res.endedAt - rounds[0]!.i.res.startedAt), ...(firstError ? { error: firstError } : {}),
        },
        rssMb: chain.rss(),
      },
    ],
  };
}
