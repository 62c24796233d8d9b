// How long fan-out's consume → produce → commit transaction takes, and how long until a read_committed
// reader sees its records: commitInTransaction (AddPartitionsToTxn, Produce, AddOffsetsToTxn,
// TxnOffsetCommit, EndTxn, one after another) against an experiment that overlaps the record and the
// offset steps (two independent chains; EndTxn waits for both) on a producer with five requests in
// flight. The overlap is faster in most rounds on an idle broker (by up to a quarter, not in every
// round) and gains nothing in the pipeline under load, so the pipeline does not use it.
// Against a running broker (npm run stack -- up); it makes topics of its own and deletes them:
//   node --conditions=source --import tsx tools/repro/txn-steps.ts [--brokers 127.0.0.1:9092] [--count 400] [--gap-ms 2] [--rounds 4]
// Each transaction writes 10 records to one partition, one to a trace topic, and one offset, like a
// fan-out batch; the variants alternate, since a fresh broker speeds up for minutes (its JIT).
import { parseArgs } from 'node:util';
import { randomUUID } from 'node:crypto';
import { createConsumer, createKafka, createProducer, type Producer } from '@switchyard/platform/kafka/client';
import { createLogger } from '@switchyard/platform/logger';
import { commitInTransaction, type ConsumedPosition, type TransactionRecord } from '@switchyard/platform/exactly-once/transaction';

const { values } = parseArgs({ options: {
  brokers: { type: 'string', default: '127.0.0.1:9092' }, count: { type: 'string', default: '400' },
  'gap-ms': { type: 'string', default: '2' }, rounds: { type: 'string', default: '4' },
} });
const count = Number(values.count);
const gapMs = Number(values['gap-ms']);
const logger = createLogger({ service: 'txn-steps', level: 'error' });
// The exactly-once stages' client settings (pipeline.ts).
const kafka = createKafka({ brokers: values.brokers!.split(','), clientId: 'txn-steps', logger, overrides: { retry: { initialRetryTime: 10, maxRetryTime: 10_000, retries: 14 } } });
const run = randomUUID().slice(0, 8);
const [input, output, trace, group] = [`txn-in-${run}`, `txn-out-${run}`, `txn-trace-${run}`, `txn-g-${run}`];

type Commit = (producer: Producer, records: TransactionRecord[], positions: ConsumedPosition[]) => Promise<void>;

/** The experiment: records and offsets side by side; both settle before EndTxn (commit or abort). */
const overlapped: Commit = async (producer, records, positions) => {
  const txn = await producer.transaction();
  try {
    const steps = await Promise.allSettled([
      txn.sendBatch({ acks: -1, topicMessages: [...new Set(records.map((r) => r.topic))].map((topic) => ({ topic, messages: records.filter((r) => r.topic === topic).map(({ key, value, partition }) => ({ key, value, ...(partition !== undefined ? { partition } : {}) })) })) }),
      ...positions.map((p) => txn.sendOffsets({ consumerGroupId: p.groupId, topics: [{ topic: p.topic, partitions: [{ partition: p.partition, offset: p.offset }] }] })),
    ]);
    const failed = steps.find((s): s is PromiseRejectedResult => s.status === 'rejected');
    if (failed) throw failed.reason;
    await txn.commit();
  } catch (err) {
    await txn.abort().catch(() => undefined);
    throw err;
  }
};

const variants: Array<{ label: string; producer: () => Producer; commit: Commit }> = [
  { label: 'commitInTransaction', producer: () => createProducer(kafka, { transactionalId: `${run}-now` }), commit: commitInTransaction },
  { label: 'overlapped', producer: () => kafka.producer({ idempotent: true, maxInFlightRequests: 5, allowAutoTopicCreation: false, transactionalId: `${run}-ovl`, transactionTimeout: 60_000 }), commit: overlapped },
];

const admin = kafka.admin();
await admin.connect();
await admin.createTopics({ waitForLeaders: true, topics: [{ topic: input, numPartitions: 3 }, { topic: output, numPartitions: 3 }, { topic: trace, numPartitions: 1 }] });
const seen = new Map<string, number>();
const reader = createConsumer(kafka, { groupId: `${group}-reader`, minBytes: 1, maxWaitTimeInMs: 100 });
await reader.connect();
await reader.subscribe({ topic: output, fromBeginning: true });
await reader.run({ eachBatch: async ({ batch }) => { const now = performance.now(); for (const m of batch.messages) seen.set(m.key!.toString(), now); } });
await new Promise((r) => setTimeout(r, 3000));

const quantile = (xs: number[], q: number) => { const s = [...xs].sort((a, b) => a - b); return s[Math.min(s.length - 1, Math.floor(q * s.length))] ?? NaN; };
const ms = (xs: number[]) => [0.5, 0.9, 0.99].map((q) => quantile(xs, q).toFixed(1)).join(' / ');

console.log(`| round | variant | transaction p50 / p90 / p99 ms | visible to a reader p50 / p90 / p99 ms |\n|---|---|---|---|`);
for (let round = 1; round <= Number(values.rounds); round++) {
  for (const { label, producer: make, commit } of round % 2 ? variants : [...variants].reverse()) {
    const producer = make();
    await producer.connect();
    const took: number[] = [];
    const started = new Map<string, number>();
    for (let i = 0; i < count; i++) {
      const key = `${round}-${label}-${i}`;
      const t0 = performance.now();
      started.set(key, t0);
      const records: TransactionRecord[] = Array.from({ length: 10 }, (_, k) => ({ topic: output, partition: 0, key: k === 0 ? key : `${key}-${k}`, value: Buffer.alloc(300) }));
      records.push({ topic: trace, partition: 0, key: null, value: Buffer.alloc(100) });
      await commit(producer, records, [{ groupId: group, topic: input, partition: 0, offset: String(i + 1) }]);
      took.push(performance.now() - t0);
      if (gapMs > 0) await new Promise((r) => setTimeout(r, gapMs));
    }
    await new Promise((r) => setTimeout(r, 1000));
    const visible = [...started].flatMap(([key, t0]) => { const at = seen.get(key); return at === undefined ? [] : [at - t0]; });
    console.log(`| ${round} | ${label} | ${ms(took)} | ${ms(visible)} (${visible.length}/${count} seen) |`);
    await producer.disconnect();
  }
}
await reader.disconnect();
await admin.deleteTopics({ topics: [input, output, trace] }).catch(() => undefined);
await admin.disconnect();
