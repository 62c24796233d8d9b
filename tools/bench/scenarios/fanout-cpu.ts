// Fan-out's CPU time per event against a bare kafkajs consume → transactional produce of the same
// records (tools/bench/bare-fanout.ts), in paired rounds over the same backlog. Each round writes
// warm-up + measured events to the ingest topic through ingest (one source, one webhooks
// destination: one task an event; no delivery runs), then fan-out alone drains them (a fresh
// process, resuming from its committed position) and the bare program drains them in a group of its
// own (resuming from its own offsets); which goes first alternates. Both figures are process CPU
// time (/proc/<pid>/stat) from the moment the warm-up's records were done to the moment every
// record's transaction committed, divided by the records in between.
import { runBareDrain, type BareDrain } from '../bare-drain.js';
import { basicAuth } from '../chain.js';
import { log, type BenchContext } from '../context.js';
import { processCpuMs } from '../cpu-time.js';
import { batchRequests, median, runLoad, trackCall } from '../load.js';
import { makeDestination, makeSource, Pipeline, rawKafka, rssMb } from '../pipeline.js';
import { round, type Row } from '../report.js';
import { scrapeSums } from '../service-stats.js';

type Admin = ReturnType<ReturnType<typeof rawKafka>['admin']>;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The row, and the bare program's CPU per record (a part of the end-to-end ceiling). */
export async function fanoutCpu(ctx: BenchContext): Promise<{ row: Row; bareUsPerRecord: number }> {
  const { ref, s, runId, serviceEnv } = ctx;
  const prefix = `${ctx.base}fan.`;
  const p = new Pipeline(ref, prefix, { ...serviceEnv, SWITCHYARD_PARTITIONS: '3' }, ctx.code);
  const admin = rawKafka(ref, 'bench-admin').admin();
  try {
    await p.setup();
    await admin.connect();
    const bareOut = `${prefix}bare-tasks`;
    await createTopic(admin, bareOut, 3);
    const src = makeSource();
    // Nothing delivers in this scenario: the URL is never called.
    const d = makeDestination(src.id, ['http://127.0.0.1:9/']);
    await p.writeConfig([src], [d]);
    const ingest = await p.start('ingest');
    // The bare program's records are the size of a task built from the load's calls.
    const { id, call } = trackCall(runId, 'fan-size');
    const now = new Date().toISOString();
    const recordBytes = p.taskBytes(d, id, JSON.stringify({ version: 1, ...call, receivedAt: now, sentAt: now }));
    const requests = Math.ceil((s.fanoutWarmEvents + s.fanoutEvents) / s.batchSize);
    const events = requests * s.batchSize;
    const ingestCount = async () => (await admin.fetchTopicOffsets(p.topics.ingest)).reduce((n, x) => n + Number(x.high), 0);
    log(`fan-out CPU per event, ${s.rounds} paired round(s) with a bare consume → transactional produce: ${s.fanoutWarmEvents} + ${s.fanoutEvents} events each`);
    const rounds: Array<{ written: boolean; fan: FanoutDrain; bare: BareDrain }> = [];
    for (let k = 0; k < s.rounds; k++) {
      const before = await ingestCount();
      const res = await runLoad({ origin: ingest.url, path: '/v1/batch', headers: basicAuth(src), requests: batchRequests(runId, `fan${k}`, requests, s.batchSize), concurrency: s.ingestConcurrency });
      const written = res.errors === 0 && (await ingestCount()) - before === events;
      const fan = () => fanoutDrain(ctx, p, admin, s.fanoutWarmEvents, events);
      const bare = () => runBareDrain('bare-fanout.ts', {
        KAFKA_BROKERS: ref.brokers, BARE_IN_TOPIC: p.topics.ingest, BARE_OUT_TOPIC: bareOut, BARE_GROUP: `${prefix}bare`, BARE_TRANSACTIONAL_ID: `${prefix}bare`,
        BARE_RECORD_BYTES: String(recordBytes), BARE_WARM: String(s.fanoutWarmEvents), BARE_RECORDS: String(events),
      }, events, s.deliverTimeoutMs);
      // Alternate which goes first, so a drift in the machine's speed does not favour either side.
      if (k % 2 === 0) { const f = await fan(); rounds.push({ written, fan: f, bare: await bare() }); } else { const b = await bare(); rounds.push({ written, fan: await fan(), bare: b }); }
    }
    const ratios = rounds.map((r) => r.fan.usPerEvent / r.bare.usPerRecord);
    const ratio = median(ratios);
    const bareUsPerRecord = median(rounds.map((r) => r.bare.usPerRecord));
    const wholeProcess = rounds.some((r) => r.fan.wholeProcess);
    return {
      bareUsPerRecord,
      row: {
        scenario: 'fan-out CPU per event vs bare consume→transactional produce', value: median(rounds.map((r) => r.fan.usPerEvent)), unit: 'µs/event',
        baseline: { name: 'bare', value: bareUsPerRecord }, ratio, target: '≤ 1.5 × bare', met: ratio <= 1.5,
        verified: rounds.every((r) => r.written && r.fan.ok && r.bare.ok),
        details: {
          events: events - s.fanoutWarmEvents, warmEvents: s.fanoutWarmEvents, recordBytes, roundRatios: ratios.map((x) => round(x, 2)).join('/'),
          roundUs: rounds.map((r) => `${round(r.fan.usPerEvent)}/${round(r.bare.usPerRecord)}`).join(', '),
          fanoutPerS: median(rounds.map((r) => r.fan.perS)), barePerS: median(rounds.map((r) => r.bare.perS)),
          // A tiny run's drain can be over before the warm-up could be told apart: then from the process's start.
          ...(wholeProcess ? { window: 'whole process (start-up included)' } : {}),
        },
        rssMb: { fanout: median(rounds.map((r) => r.fan.rss)) },
      },
    };
  } finally {
    await admin.disconnect().catch(() => undefined);
    await p.stopAll();
  }
}

/**
 * Creates a topic and waits until each partition has a leader. Not kafkajs's waitForLeaders: its
 * metadata request can meet UNKNOWN_TOPIC_OR_PARTITION before the new topic reached the broker it
 * asks, and it does not retry that.
 */
async function createTopic(admin: Admin, topic: string, partitions: number): Promise<void> {
  await admin.createTopics({ topics: [{ topic, numPartitions: partitions }] });
  const deadline = Date.now() + 30_000;
  for (;;) {
    const led = await admin.fetchTopicMetadata({ topics: [topic] }).then((m) => m.topics[0]?.partitions.filter((x) => x.leader >= 0).length ?? 0, () => 0);
    if (led >= partitions) return;
    if (Date.now() > deadline) throw new Error(`topic ${topic}: ${led} of ${partitions} partitions led after 30 s`);
    await sleep(100);
  }
}

interface FanoutDrain { usPerEvent: number; perS: number; ok: boolean; rss: number; wholeProcess: boolean }

/**
 * Fan-out started alone over a backlog of `total` events: its tasks counter (/metrics) every 100 ms
 * until the warm-up's tasks are written, then the delivery topic's end offsets (read at the broker,
 * nothing asked of fan-out) until they can hold every task, the counter to confirm, and 300 ms for
 * the last transaction and group offsets. Stopped after.
 */
async function fanoutDrain(ctx: BenchContext, p: Pipeline, admin: Admin, warm: number, total: number): Promise<FanoutDrain> {
  const deliveryEnd = async () => (await admin.fetchTopicOffsets(p.topics.delivery)).reduce((n, x) => n + Number(x.high), 0);
  const endBefore = await deliveryEnd();
  const fanout = await p.start('fanout');
  const pid = fanout.proc.child.pid;
  const tasks = async () => (await scrapeSums(fanout.url, ['fanout_tasks_produced_total'])).fanout_tasks_produced_total!;
  const sample = async () => { const n = await tasks(); return { tasks: n, cpuMs: processCpuMs(pid), at: Date.now() }; };
  const deadline = Date.now() + ctx.s.deliverTimeoutMs;
  try {
    let at = await sample();
    while (at.tasks < warm && Date.now() < deadline) { await sleep(100); at = await sample(); }
    const wholeProcess = at.tasks > warm + (total - warm) / 2;
    const from = wholeProcess ? { tasks: 0, cpuMs: 0, at: NaN } : at;
    let doneAt = NaN;
    while (Date.now() < deadline) {
      await sleep(100);
      if ((await deliveryEnd()) - endBefore >= total && (await tasks()) >= total) { doneAt = Date.now(); break; }
    }
    await sleep(300);
    const cpuMs = processCpuMs(pid);
    const written = await tasks();
    const events = written - from.tasks;
    return { usPerEvent: ((cpuMs - from.cpuMs) * 1000) / events, perS: events / Math.max(0.001, (doneAt - from.at) / 1000), ok: written === total, rss: rssMb(pid), wholeProcess };
  } finally {
    await p.scale('fanout', 0);
  }
}
