// Baseline (c) and ingest only: a bare node:http → Kafka process (bare-ingest.ts) and ingest under
// the same load, in paired rounds, each load verified by its topic's record count.
import type { Chain } from '../chain.js';
import { basicAuth } from '../chain.js';
import { log, type BenchContext } from '../context.js';
import { batchRequests, median, quantile, runLoad } from '../load.js';
import { rawKafka, rssMb, startBareIngest } from '../pipeline.js';
import { round, type Row } from '../report.js';

export async function ingestScenario(ctx: BenchContext, chain: Chain): Promise<Row[]> {
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
  /** One measured load; verified by the topic's record count growing by exactly the events sent. */
  const measure = async (origin: string, topic: string, label: string) => {
    const before = await count(topic);
    const res = await ingestLoad(origin, label);
    return { res, rate: cEvents / ((res.endedAt - res.startedAt) / 1000), verified: (await count(topic)) - before === cEvents && res.errors === 0 };
  };
  log(`baseline (c) and ingest only, ${s.rounds} paired round(s): ${s.ingestRequests} × ${s.batchSize} events, concurrency ${s.ingestConcurrency}`);
  const rounds: Array<{ c: Awaited<ReturnType<typeof measure>>; i: Awaited<ReturnType<typeof measure>> }> = [];
  for (let k = 0; k < s.rounds; k++) {
    // Alternate which goes first, so a drift in the machine's speed does not favour either side.
    const cFirst = k % 2 === 0;
    const first = await (cFirst ? measure(bare.url, `${base}bare`, `bare${k}`) : measure(ingest.url, p1.topics.ingest, `ingest${k}`));
    const second = await (cFirst ? measure(ingest.url, p1.topics.ingest, `ingest${k}`) : measure(bare.url, `${base}bare`, `bare${k}`));
    rounds.push(cFirst ? { c: first, i: second } : { c: second, i: first });
  }
  const bareRss = rssMb(bare.child.pid);
  await bare.stop();
  const ratios = rounds.map((r) => r.i.rate / r.c.rate);
  const ratio = median(ratios);
  const cRate = median(rounds.map((r) => r.c.rate));
  const cAll = rounds.map((r) => r.c.res.latencies).flat();
  const iAll = rounds.map((r) => r.i.res.latencies).flat();
  const firstError = rounds.find((r) => r.i.res.firstError)?.i.res.firstError;
  return [
    { scenario: 'baseline (c) bare http→Kafka', value: cRate, unit: 'events/s', verified: rounds.every((r) => r.c.verified), details: { p50ms: quantile(cAll, 0.5), p99ms: quantile(cAll, 0.99), rss: bareRss }, rssMb: {} },
    {
      scenario: 'ingest only', value: median(rounds.map((r) => r.i.rate)), unit: 'events/s', baseline: { name: '(c)', value: cRate }, ratio, target: '≥ 0.8', met: ratio >= 0.8, verified: rounds.every((r) => r.i.verified),
      details: { p50ms: quantile(iAll, 0.5), p99ms: quantile(iAll, 0.99), roundRatios: ratios.map((x) => round(x, 2)).join('/'), benchCpu: rounds[0]!.i.res.cpuMs / (rounds[0]!.i.res.endedAt - rounds[0]!.i.res.startedAt), ...(firstError ? { error: firstError } : {}) }, rssMb: chain.rss(),
    },
  ];
}
