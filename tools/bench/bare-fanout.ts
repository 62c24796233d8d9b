// The least an exactly-once fan-out can do with kafkajs: a consumer group reads the ingest topic and,
// for each batch, one transaction writes one output record per input record (of a delivery task's
// size, the input's bytes at its start) and the batch's next offset (sendOffsets), then commits. No
// decoding, no config, no Switchyard code; run as its own process so its CPU time is its own.
// Env: KAFKA_BROKERS, BARE_IN_TOPIC, BARE_OUT_TOPIC, BARE_GROUP, BARE_TRANSACTIONAL_ID,
// BARE_RECORD_BYTES (each output record's size), BARE_WARM and BARE_RECORDS (the warm-up's records
// and all). Prints `warm <records read>` once the transaction holding the BARE_WARM-th record
// committed, then one JSON line {records, produced, ms} once every record's did, and exits.
import { z } from 'zod';
import { kafkaSecurityEnv, loadConfig } from '@switchyard/platform/config';
import { Kafka, logLevel } from '@switchyard/platform/kafkajs/index';
import { kafkaSecurityOptions } from '@switchyard/platform/kafka/security';

const brokers = (process.env.KAFKA_BROKERS ?? '127.0.0.1:9092').split(',');
const inTopic = process.env.BARE_IN_TOPIC!;
const outTopic = process.env.BARE_OUT_TOPIC!;
const groupId = process.env.BARE_GROUP!;
const recordBytes = Number(process.env.BARE_RECORD_BYTES ?? 400);
const warm = Number(process.env.BARE_WARM ?? 0);
const total = Number(process.env.BARE_RECORDS);
/** Records per send: half a megabyte, under the broker's default 1 MB message size. */
const perSend = Math.max(1, Math.floor((512 * 1024) / recordBytes));

const kafka = new Kafka({ clientId: 'bench-bare-fanout', brokers, logLevel: logLevel.ERROR, ...kafkaSecurityOptions(loadConfig(z.object(kafkaSecurityEnv))) });
const producer = kafka.producer({ transactionalId: process.env.BARE_TRANSACTIONAL_ID!, idempotent: true, maxInFlightRequests: 1, allowAutoTopicCreation: false });
// Read committed (kafkajs's default), as fan-out reads.
const consumer = kafka.consumer({ groupId, maxWaitTimeInMs: 100 });
await Promise.all([producer.connect(), consumer.connect()]);
await consumer.subscribe({ topic: inTopic, fromBeginning: true });

let records = 0;
let produced = 0;
let startedAt = 0;
let finish!: () => void;
const finished = new Promise<void>((resolve) => { finish = resolve; });
await consumer.run({
  autoCommit: false,
  eachBatch: async ({ batch }) => {
    if (batch.isEmpty()) return;
    startedAt ||= Date.now();
    const messages = batch.messages.map((m) => {
      const value = Buffer.alloc(recordBytes);
      m.value?.copy(value, 0, 0, Math.min(recordBytes, m.value.length));
      return { key: m.key, value };
    });
    const tx = await producer.transaction();
    try {
      // A batch's outputs share its partition (same keys): sent in sends under the broker's message size limit.
      for (let i = 0; i < messages.length; i += perSend) await tx.send({ topic: outTopic, acks: -1, messages: messages.slice(i, i + perSend) });
      await tx.sendOffsets({ consumerGroupId: groupId, topics: [{ topic: batch.topic, partitions: [{ partition: batch.partition, offset: (BigInt(batch.lastOffset()) + 1n).toString() }] }] });
      await tx.commit();
    } catch (err) {
      await tx.abort().catch(() => undefined);
      throw err;
    }
    const before = records;
    records += batch.messages.length;
    produced += messages.length;
    if (before < warm && records >= warm) process.stdout.write(`warm ${records}\n`);
    if (records >= total) finish();
  },
});
await finished;
process.stdout.write(`${JSON.stringify({ records, produced, ms: Date.now() - startedAt })}\n`);
await consumer.disconnect();
await producer.disconnect();
process.exit(0);
