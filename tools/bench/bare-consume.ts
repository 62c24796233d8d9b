// The least a Kafka-side webhook sender can do with kafkajs: a consumer group reads the delivery
// topic batch by batch, decodes nothing, and commits each batch's next offset. Run as its own process
// so its CPU time is its own; beside bare-webhook-client.ts (the HTTP side) it is delivery's floor.
// Env: KAFKA_BROKERS, BARE_TOPIC, BARE_GROUP, BARE_WARM and BARE_RECORDS (the warm-up's records and
// all). Prints `warm <records read>` once the batch holding the BARE_WARM-th record was committed,
// then one JSON line {records, ms} once every record's was, and exits.
import { z } from 'zod';
import { kafkaSecurityEnv, loadConfig } from '@switchyard/platform/config';
import { Kafka, logLevel } from '@switchyard/platform/kafkajs/index';
import { kafkaSecurityOptions } from '@switchyard/platform/kafka/security';

const brokers = (process.env.KAFKA_BROKERS ?? '127.0.0.1:9092').split(',');
const topic = process.env.BARE_TOPIC!;
const warm = Number(process.env.BARE_WARM ?? 0);
const total = Number(process.env.BARE_RECORDS);

const kafka = new Kafka({ clientId: 'bench-bare-consume', brokers, logLevel: logLevel.ERROR, ...kafkaSecurityOptions(loadConfig(z.object(kafkaSecurityEnv))) });
const consumer = kafka.consumer({ groupId: process.env.BARE_GROUP!, maxWaitTimeInMs: 100 });
await consumer.connect();
await consumer.subscribe({ topic, fromBeginning: true });

let records = 0;
let startedAt = 0;
let finish!: () => void;
const finished = new Promise<void>((resolve) => { finish = resolve; });
await consumer.run({
  autoCommit: false,
  eachBatch: async ({ batch }) => {
    if (batch.isEmpty()) return;
    startedAt ||= Date.now();
    await consumer.commitOffsets([{ topic: batch.topic, partition: batch.partition, offset: (BigInt(batch.lastOffset()) + 1n).toString() }]);
    const before = records;
    records += batch.messages.length;
    if (before < warm && records >= warm) process.stdout.write(`warm ${records}\n`);
    if (records >= total) finish();
  },
});
await finished;
process.stdout.write(`${JSON.stringify({ records, ms: Date.now() - startedAt })}\n`);
await consumer.disconnect();
process.exit(0);
