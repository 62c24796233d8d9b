// Baseline (a): raw kafkajs produce → consume of the same payloads on the same broker, the ceiling
// the end-to-end row is compared with (beside baseline (b)).
import { randomUUID } from 'node:crypto';
import { log, type BenchContext } from '../context.js';
import { rawKafka, type StackRef } from '../pipeline.js';
import { messageIdOf } from '../receiver.js';
import type { Row } from '../report.js';

export async function kafkaBaseline(ctx: BenchContext): Promise<{ row: Row; rate: number }> {
  const { s } = ctx;
  log(`baseline (a): kafkajs produce → consume, ${s.rawMessages} messages`);
  const a = await produceConsume(ctx.ref, `${ctx.base}raw`, s.rawMessages);
  return {
    row: { scenario: 'baseline (a) kafkajs produce→consume', value: a.rate, unit: 'msg/s', verified: a.verified, details: { messages: s.rawMessages, payloadBytes: a.payloadBytes }, rssMb: {} },
    rate: a.rate,
  };
}

/** n messages produced (acks=all, 500 a send, 8 sends at a time) to a fresh 3-partition topic and consumed by one consumer: first send to last batch. */
async function produceConsume(ref: StackRef, topic: string, n: number): Promise<{ rate: number; verified: boolean; payloadBytes: number }> {
  const kafka = rawKafka(ref, 'bench-raw');
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({ topics: [{ topic, numPartitions: 3 }], waitForLeaders: true });
  await admin.disconnect();
  const payload = (k: number) => JSON.stringify({ version: 1, type: 'track', messageId: `raw-${k}-${randomUUID()}`, userId: `user-${k % 997}`, event: 'Order Completed', properties: { orderId: `o-${k}`, revenue: 42.5, currency: 'EUR', products: [{ sku: 'sku-1', qty: 2 }] }, context: { library: { name: 'switchyard-bench' } }, timestamp: new Date().toISOString() });
  const messages = Array.from({ length: n }, (_, k) => ({ key: `user-${k % 997}`, value: payload(k) }));
  const seen = new Set<string>();
  const consumer = kafka.consumer({ groupId: `${topic}-g`, maxWaitTimeInMs: 50 });
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  let done!: () => void;
  const finished = new Promise<void>((r) => { done = r; });
  let lastAt = 0;
  let joined!: () => void;
  const ready = new Promise<void>((r) => { joined = r; });
  consumer.on(consumer.events.GROUP_JOIN, () => joined());
  await consumer.run({
    eachBatch: async ({ batch }) => {
      for (const m of batch.messages) { const v = m.value!.toString(); seen.add(messageIdOf(v)!); }
      lastAt = Date.now();
      if (seen.size >= n) done();
    },
  });
  await ready;
  const producer = kafka.producer({ allowAutoTopicCreation: false });
  await producer.connect();
  const start = Date.now();
  const sends: Array<Promise<unknown>> = [];
  for (let k = 0; k < n; k += 500) {
    sends.push(producer.send({ topic, acks: -1, messages: messages.slice(k, k + 500) }));
    if (sends.length >= 8) await Promise.all(sends.splice(0));
  }
  await Promise.all(sends);
  let timer: NodeJS.Timeout | undefined;
  const verified = await Promise.race([finished.then(() => true), new Promise<boolean>((r) => { timer = setTimeout(() => r(false), 120_000); })]);
  clearTimeout(timer);
  await producer.disconnect();
  await consumer.disconnect();
  return { rate: seen.size / ((lastAt - start) / 1000), verified: verified && seen.size === n, payloadBytes: Buffer.byteLength(messages[0]!.value) };
}
