import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Producer } from '../kafkajs/index.js';
import { Readiness } from '../lifecycle.js';
import { guardProducer } from './access-guard.js';
import { FailureWatch, kafkaLogLine, RepeatCollapser } from './failure-watch.js';

const security = { KAFKA_SECURITY_PROTOCOL: 'SASL_SSL' as const, KAFKA_SASL_MECHANISM: 'SCRAM-SHA-512' as const, KAFKA_SASL_USERNAME: 'switchyard-fanout', KAFKA_SASL_PASSWORD: 'never-logged' };

function watched() {
  const watch = new FailureWatch();
  const stops: string[] = [];
  watch.handleFatal((message) => stops.push(message));
  watch.useKafka(['kafka-1:9093'], security);
  return { watch, stops };
}
const protocolError = (type: string, message: string) => Object.assign(new Error(message), { name: 'KafkaJSProtocolError', type, retriable: false });

describe('FailureWatch', () => {
  it('stops once on refused credentials, with the one line naming the variables', () => {
    const { watch, stops } = watched();
    const err = Object.assign(new Error('SASL SCRAM SHA512 authentication failed: invalid credentials'), { name: 'KafkaJSSASLAuthenticationError' });
    watch.kafkaError(err);
    watch.kafkaError(err);
    assert.deepEqual(stops, ['Kafka refused the SASL credentials (SCRAM-SHA-512, user switchyard-fanout): check KAFKA_SASL_USERNAME / KAFKA_SASL_PASSWORD']);
  });

  it('does not stop for an unreachable broker; it remembers it for /readyz', () => {
    const { watch, stops } = watched();
    watch.kafkaError(Object.assign(new Error('Connection error: connect ECONNREFUSED 10.1.1.1:9093'), { name: 'KafkaJSConnectionError', code: 'ECONNREFUSED', broker: '10.1.1.1:9093' }));
    assert.deepEqual(stops, []);
    assert.match(watch.unreachable() ?? '', /^cannot reach Kafka broker 10\.1\.1\.1:9093 \(ECONNREFUSED\): check KAFKA_BROKERS/);
    const readiness = new Readiness();
    readiness.set('producer', false, () => watch.unreachable());
    assert.match(readiness.state().problems?.producer ?? '', /KAFKA_BROKERS/);
    readiness.set('producer', true);
    assert.equal(readiness.state().problems, undefined);
  });

  it('a missing ACL reported by the failing operation names the resource and operation', async () => {
    const { watch, stops } = watched();
    const producer = { send: async () => { throw protocolError('TOPIC_AUTHORIZATION_FAILED', 'Not authorized to access topics: [Topic authorization failed]'); }, transaction: async () => ({}) } as unknown as Producer;
    guardProducer(watch, producer, undefined);
    // kafkajs logs the failed response (no topic) before the send rejects.
    watch.kafkaLog({ message: 'Response Metadata(key: 3, version: 6)', error: 'Not authorized to access topics: [Topic authorization failed]' });
    await assert.rejects(producer.send({ topic: 't.delivery', messages: [] }));
    assert.deepEqual(stops, ['Kafka denied Write on Topic t.delivery to User:switchyard-fanout (TOPIC_AUTHORIZATION_FAILED): grant that ACL, or check KAFKA_SASL_USERNAME']);
    await sleep(2100);
    assert.equal(stops.length, 1, 'the log line\'s pending stop was dropped');
  });

  it('a missing ACL seen only in a log line stops the service after a grace period', async () => {
    const { watch, stops } = watched();
    watch.kafkaLog({ message: 'Crash: KafkaJSProtocolError: Not authorized to access group: Group authorization failed' });
    assert.deepEqual(stops, []);
    await sleep(2100);
    assert.equal(stops.length, 1);
    assert.match(stops[0]!, /^Kafka denied Read on Group/);
  });

  it('an error kafkajs put in place of a group refusal is named by the consumer that got it', () => {
    const { watch, stops } = watched();
    watch.kafkaLog({ message: 'Response GroupCoordinator(key: 10, version: 2)', error: 'Not authorized to access group: Group authorization failed' });
    const coordinatorNotFound = Object.assign(new Error('Failed to find group coordinator'), { name: 'KafkaJSGroupCoordinatorNotFound', retriable: false });
    watch.kafkaError(coordinatorNotFound, { Group: { operation: 'Read', names: ['p.fanout'] }, Topic: { operation: 'Read', names: ['p.ingest'] } });
    assert.deepEqual(stops, ['Kafka denied Read on Group p.fanout to User:switchyard-fanout (GROUP_AUTHORIZATION_FAILED): grant that ACL, or check KAFKA_SASL_USERNAME']);
  });

  it('transactions report their transactional id, records\' topics and offsets\' group', async () => {
    const { watch, stops } = watched();
    const txn = { sendOffsets: async () => { throw protocolError('GROUP_AUTHORIZATION_FAILED', 'Not authorized to access group: Group authorization failed'); } };
    const producer = { transaction: async () => txn } as unknown as Producer;
    guardProducer(watch, producer, 'p.fanout-p0');
    const t = await producer.transaction();
    await assert.rejects(t.sendOffsets({ consumerGroupId: 'p.fanout', topics: [{ topic: 'p.ingest', partitions: [] }] }));
    assert.match(stops[0]!, /^Kafka denied Read on Group p\.fanout to User:switchyard-fanout/);
  });
});

describe('kafkajs log lines', () => {
  it('collapses repeats of a line into a count, and drops kafkajs\'s stacks', () => {
    let now = 0;
    const { watch } = watched();
    const collapser = new RepeatCollapser(() => now, 30_000);
    const entry = { message: 'Connection error: connect ECONNREFUSED 10.1.1.1:9093', broker: '10.1.1.1:9093', stack: 'Error: ...\n at ...' };
    const first = kafkaLogLine(watch, collapser, 'error', 'Connection', entry);
    assert.ok(first);
    assert.equal('stack' in first.fields, false);
    assert.match(first.msg, /^cannot reach Kafka broker 10\.1\.1\.1:9093 \(ECONNREFUSED\): check KAFKA_BROKERS.*; retrying/);
    for (let i = 0; i < 20; i++) { now += 1000; assert.equal(kafkaLogLine(watch, collapser, 'error', 'Connection', entry), undefined); }
    now += 15_000;
    assert.equal(kafkaLogLine(watch, collapser, 'error', 'Connection', entry)?.fields.repeats, 20);
  });

  it('a fatal line is left to the watch, which logs its own one line', () => {
    const { watch, stops } = watched();
    const line = kafkaLogLine(watch, new RepeatCollapser(), 'error', 'Connection', { message: 'Connection error: self-signed certificate in certificate chain', broker: 'kafka-1:9093' });
    assert.equal(line, undefined);
    assert.equal(stops.length, 1);
    assert.match(stops[0]!, /not trusted \(SELF_SIGNED_CERT_IN_CHAIN\): check KAFKA_SSL_CA_FILE \(unset: Node's default roots\)/);
    assert.doesNotMatch(stops[0]!, /never-logged/);
  });
});
