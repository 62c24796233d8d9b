// Reproduction of a kafkajs 2.2.4 defect found by test/faults-cluster.test.ts (RELIABILITY.md): on a
// cluster of three brokers, with no fault at all, back-to-back transactions whose records go to
// partitions led by different brokers commit some records twice. Switchyard's transactional
// settings (createProducer, the transactional client's 10 ms retries); a private three-node cluster
// in a temporary directory; a topic of 6 partitions, leaders spread over the nodes.
//
//   node --conditions=source --import tsx tools/repro/kafkajs-multibroker-transactions.ts
//   ONE_BROKER=1 …   the same, each transaction only to the partitions one broker leads (no duplicate expected)
//
// Most likely cause (node_modules/kafkajs/src/producer/sendMessages.js): one send is a produce
// request per leader broker, run side by side; when one fails (here CONCURRENT_TRANSACTIONS from
// AddPartitionsToTxn, which follows every commit for a few milliseconds) the whole send is retried,
// and a broker whose request was still in flight is sent its records again with new sequence
// numbers, which the broker accepts as new records of the same transaction.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { createKafka, createProducer } from '@switchyard/platform/kafka/client';
import { createLogger } from '@switchyard/platform/logger';
import { ensureArtifacts } from '../stack/artifacts.js';
import { startKafkaCluster } from '../stack/kafka.js';
import { freeKafkaAddresses } from '../stack/ports.js';

const TRANSACTIONS = Number(process.env.N ?? 300);
const oneBroker = process.env.ONE_BROKER === '1';
const { kafkaLibs } = await ensureArtifacts({ log: console.log });
const dir = mkdtempSync(join(tmpdir(), 'switchyard-repro-'));
const cluster = await startKafkaCluster({ libs: kafkaLibs, dir, nodes: await freeKafkaAddresses(3), heap: '384m' });
const logger = createLogger({ service: 'repro', level: 'silent' });
try {
  const brokers = cluster.brokers.split(',');
  const kafka = createKafka({ brokers, clientId: 'repro', logger });
  const admin = kafka.admin();
  await admin.connect();
  await sleep(3000);
  // Replicas rotated so partition p is led by node p mod 3 + 1.
  await admin.createTopics({ waitForLeaders: false, topics: [{ topic: 'out', replicaAssignment: Array.from({ length: 6 }, (_, p) => ({ partition: p, replicas: [0, 1, 2].map((k) => ((p + k) % 3) + 1) })), configEntries: [{ name: 'min.insync.replicas', value: '2' }] }] });
  let leaders: Array<{ partition: number; leader: number }> = [];
  for (let i = 0; i < 30 && leaders.length < 6; i++) {
    await sleep(1000);
    try { leaders = (await admin.fetchTopicMetadata({ topics: ['out'] })).topics[0]!.partitions.map((p) => ({ partition: p.partitionId, leader: p.leader })); } catch { /* not yet */ }
  }
  const partitions = oneBroker ? leaders.filter((l) => l.leader === leaders[0]!.leader).map((l) => l.partition) : leaders.map((l) => l.partition);
  console.log(`leaders ${leaders.map((l) => `${l.partition}→${l.leader}`).join(' ')}; each transaction writes to partitions ${partitions.join(', ')}`);

  const txnKafka = createKafka({ brokers, clientId: 'repro-txn', logger, overrides: { retry: { initialRetryTime: 10, maxRetryTime: 10_000, retries: 14 } } });
  const producer = createProducer(txnKafka, { transactionalId: 'repro-1' });
  await producer.connect();
  let failed = 0;
  for (let t = 0; t < TRANSACTIONS; t++) {
    const txn = await producer.transaction();
    try {
      await txn.sendBatch({ acks: -1, topicMessages: [{ topic: 'out', messages: partitions.map((p) => ({ partition: p, key: `${t}-${p}`, value: `${t}-${p}` })) }] });
      await txn.commit();
    } catch {
      failed++;
      await txn.abort().catch(() => undefined);
    }
  }
  await producer.disconnect();

  const consumer = kafka.consumer({ groupId: 'repro-reader' });
  await consumer.connect();
  await consumer.subscribe({ topic: 'out', fromBeginning: true });
  const seen = new Map<string, number>();
  let read = 0;
  await consumer.run({ eachMessage: async ({ message }) => { read++; const v = String(message.value); seen.set(v, (seen.get(v) ?? 0) + 1); } });
  const expected = TRANSACTIONS * partitions.length;
  for (let i = 0; i < 60 && read < expected; i++) await sleep(500);
  await sleep(3000);
  await consumer.disconnect();
  await admin.disconnect();
  const twice = [...seen].filter(([, n]) => n > 1);
  console.log(`${TRANSACTIONS} transactions (${failed} failed), ${expected} records written, ${read} read (read_committed), ${twice.length} committed more than once${twice.length ? `, e.g. ${twice.slice(0, 5).map(([v, n]) => `${v} ×${n}`).join(', ')}` : ''}`);
} finally {
  await cluster.stop();
  rmSync(dir, { recursive: true, force: true });
}
