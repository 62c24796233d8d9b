// Baseline (c): the least an ingest endpoint can do. A bare node:http server that checks the Basic
// auth user name, parses the JSON body, and produces each call of the batch (JSON, keyed like
// ingest) with one kafkajs send per request (acks=all), answering 200 once Kafka acknowledged.
// No validation, no Avro, no framework. Run as its own process, like the ingest service.
// Env: KAFKA_BROKERS, BARE_TOPIC, BARE_WRITE_KEY; prints `listening <port>` when ready.
import { createServer } from 'node:http';
import { z } from 'zod';
import { kafkaSecurityEnv, loadConfig } from '@switchyard/platform/config';
import { Kafka, logLevel, Partitioners } from '@switchyard/platform/kafkajs/index';
import { kafkaSecurityOptions } from '@switchyard/platform/kafka/security';

const brokers = (process.env.KAFKA_BROKERS ?? '127.0.0.1:9092').split(',');
const topic = process.env.BARE_TOPIC!;
const expected = `Basic ${Buffer.from(`${process.env.BARE_WRITE_KEY}:`).toString('base64')}`;

const security = kafkaSecurityOptions(loadConfig(z.object(kafkaSecurityEnv)));
const kafka = new Kafka({ clientId: 'bench-bare-ingest', brokers, logLevel: logLevel.ERROR, ...security });
const producer = kafka.producer({ allowAutoTopicCreation: false, createPartitioner: Partitioners.DefaultPartitioner });
await producer.connect();

const server = createServer({ keepAlive: true }, (req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    if (req.headers.authorization !== expected) { res.writeHead(401).end(); return; }
    let batch: Array<Record<string, unknown>>;
    try { batch = (JSON.parse(Buffer.concat(chunks).toString('utf8')) as { batch: Array<Record<string, unknown>> }).batch; } catch { res.writeHead(400).end(); return; }
    const receivedAt = Date.now();
    const messages = batch.map((call) => ({ key: `src:${String(call.userId ?? call.anonymousId)}`, value: JSON.stringify({ ...call, receivedAt }) }));
    producer.send({ topic, acks: -1, messages }).then(
      () => res.writeHead(200, { 'content-type': 'application/json' }).end('{"success":true}'),
      () => res.writeHead(503).end(),
    );
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`listening ${(server.address() as { port: number }).port}\n`);
});
process.on('SIGTERM', () => { server.closeAllConnections(); server.close(); void producer.disconnect().finally(() => process.exit(0)); });
