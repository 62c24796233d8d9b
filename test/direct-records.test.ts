// Records produced straight to the ingest topic by any Kafka producer (not through the ingest HTTP
// service) keep the same call rules as HTTP calls and count in usage, on the real stack: a plain
// producer with the Avro codec writes valid calls and each kind of invalid one; fan-out moves the
// invalid ones to invalid-events with the reason and makes no task, and the usage API counts them.
// Records ingest, control (deletion requests) and audiences (identify calls) wrote are neither
// checked again nor counted twice.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { AvroCodec, type AvroRecordTypes } from '@switchyard/platform/codec/avro-codec';
import { createProducer, type Producer } from '@switchyard/platform/kafka/client';
import { topicNames } from '@switchyard/platform/kafka/topics';
import type { DeliveryTask, InvalidEvent } from '@switchyard/platform/schemas/generated';
import { makeDestination, makeSource, writeConfig } from './support/config.js';
import { requestJson } from './support/http.js';
import { event, type EventName } from './support/pipeline-writer.js';
import { pipelineEnv, setupTopics, startService, type RunningService } from './support/services.js';
import { testKafka, testStack, uniquePrefix } from './support/stack.js';
import { TopicReader } from './support/topic-reader.js';

type Usage = { accepted: number; rejected: number; filtered: number };
type Direct = [EventName, AvroRecordTypes[EventName]];

/** Polls `read` until `done` holds (or fails with the last value after `timeoutMs`). */
async function eventually<T>(read: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) assert.fail(`condition not met within ${timeoutMs} ms; last value: ${JSON.stringify(value)}`);
    await sleep(200);
  }
}

describe('direct records: the call rules and usage of HTTP calls, applied by fan-out', () => {
  const prefix = uniquePrefix('direct-rules');
  const topics = topicNames(prefix);
  const token = `direct-admin-${randomUUID()}`;
  const source = makeSource();
  const destination = makeDestination(source.id);
  const services: RunningService[] = [];
  let control: RunningService;
  let ingest: RunningService;
  let fanout: RunningService;
  let reader: TopicReader;
  let producer: Producer;
  const codec = new AvroCodec({ registryUrl: testStack().registryUrl });
  const api = (method: string, path: string, body?: unknown) => requestJson(method, `${control.url}${path}`, { token, body });
  const tasksFor = (messageId: string, count = 1) => reader.waitFor<DeliveryTask>(topics.delivery, (t) => t.messageId === messageId, count);
  const usage = async (): Promise<Usage> => {
    const res = await api('GET', `/v1/sources/${source.id}/usage`);
    assert.equal(res.status, 200, res.text);
    return (res.body.days as Usage[]).reduce((t, d) => ({ accepted: t.accepted + d.accepted, rejected: t.rejected + d.rejected, filtered: t.filtered + d.filtered }), { accepted: 0, rejected: 0, filtered: 0 });
  };
  /** What any Kafka application would do: Avro in the wire format, keyed by source and user, no headers. */
  const produce = async (...records: Direct[]) => {
    await producer.send({ topic: topics.ingest, acks: -1, messages: records.map(([name, v]) => ({ key: `${v.sourceId}:${v.userId ?? v.anonymousId ?? ''}`, value: codec.encode(name, v as never) })) });
    return records.map(([name, v]) => codec.encode(name, v as never));
  };
  const now = Date.now();
  const at = { timestamp: now, receivedAt: now };
  const src = source.id;

  before(async () => {
    const env = pipelineEnv(prefix, { SWITCHYARD_ADMIN_TOKEN: token, SWITCHYARD_USAGE_INTERVAL: '300ms', AUDIENCES_SYNC_INTERVAL: '500ms' });
    await setupTopics(env);
    await writeConfig(prefix, { sources: [source], destinations: [destination] });
    [control, ingest, fanout] = await Promise.all([startService('control', env), startService('ingest', env), startService('fanout', env)]);
    services.push(control, ingest, fanout, await startService('audiences', env));
    reader = await new TopicReader([topics.delivery, topics.invalidEvents]).start();
    await codec.register();
    producer = createProducer(testKafka('direct-producer'));
    await producer.connect();
  });
  after(async () => {
    await producer?.disconnect();
    await reader?.stop();
    await Promise.all(services.map((s) => s.stop()));
  });

  it('invalid direct records go to invalid-events with the reason and make no task; valid ones get tasks; usage counts both, and what Switchyard wrote once', async () => {
    const audience = await api('POST', '/v1/audiences', { sourceId: src, name: 'Direct Buyers', condition: { event: 'Bought', within: '30d', count: { op: 'gte', value: 1 } } });
    assert.equal(audience.status, 201, audience.text);
    await sleep(500);

    const invalid: Array<[string, Direct]> = [
      ['missing_user_id', ['io.switchyard.event.Identify', event('io.switchyard.event.Identify', { sourceId: src, ...at, userId: null, anonymousId: null, traits: null })]],
      ['missing_user_id', ['io.switchyard.event.Identify', event('io.switchyard.event.Identify', { sourceId: src, ...at, userId: '', anonymousId: '', traits: null })]],
      ['missing_event', ['io.switchyard.event.Track', event('io.switchyard.event.Track', { sourceId: src, ...at, event: '', properties: null })]],
      ['missing_group_id', ['io.switchyard.event.Group', event('io.switchyard.event.Group', { sourceId: src, ...at, groupId: '', traits: null })]],
      ['missing_previous_id', ['io.switchyard.event.Alias', event('io.switchyard.event.Alias', { sourceId: src, ...at, previousId: '' })]],
      ['missing_user_id', ['io.switchyard.event.Alias', event('io.switchyard.event.Alias', { sourceId: src, ...at, userId: null, anonymousId: 'anon-1', previousId: 'anon-0' })]],
      ['message_too_large', ['io.switchyard.event.Track', event('io.switchyard.event.Track', { sourceId: src, ...at, event: 'Big', properties: JSON.stringify({ pad: 'x'.repeat(33 * 1024) }) })]],
      ['invalid_field', ['io.switchyard.event.Page', event('io.switchyard.event.Page', { sourceId: src, ...at, name: 'Home', category: null, properties: 'not json' })]],
      ['invalid_field', ['io.switchyard.event.Identify', event('io.switchyard.event.Identify', { sourceId: src, ...at, traits: '[1,2]' })]],
      ['missing_user_id', ['io.switchyard.event.Delete', event('io.switchyard.event.Delete', { sourceId: src, ...at, userId: null, anonymousId: 'anon-1', requestId: null })]],
    ];
    const buyer = `buyer-${randomUUID()}`;
    const valid: Direct[] = [
      ['io.switchyard.event.Track', event('io.switchyard.event.Track', { sourceId: src, ...at, event: 'Order Completed', properties: JSON.stringify({ revenue: 1 }) })],
      ['io.switchyard.event.Page', event('io.switchyard.event.Page', { sourceId: src, ...at, userId: null, anonymousId: 'anon-2', name: 'Home', category: null, properties: null })],
      ['io.switchyard.event.Screen', event('io.switchyard.event.Screen', { sourceId: src, ...at, name: 'Feed', category: 'Main', properties: JSON.stringify({ tab: 1 }) })],
      ['io.switchyard.event.Identify', event('io.switchyard.event.Identify', { sourceId: src, ...at, traits: JSON.stringify({ plan: 'pro' }) })],
      ['io.switchyard.event.Group', event('io.switchyard.event.Group', { sourceId: src, ...at, groupId: 'g-1', traits: null })],
      ['io.switchyard.event.Alias', event('io.switchyard.event.Alias', { sourceId: src, ...at, previousId: 'anon-2' })],
      ['io.switchyard.event.Delete', event('io.switchyard.event.Delete', { sourceId: src, ...at, requestId: null })],
      ['io.switchyard.event.Track', event('io.switchyard.event.Track', { sourceId: src, ...at, userId: buyer, event: 'Bought', properties: null })],
    ];
    // Accepted (the rules hold), then kept from the destination by its integrations map.
    const hidden = event('io.switchyard.event.Track', { sourceId: src, ...at, event: 'Hidden', properties: null, integrations: JSON.stringify({ Webhooks: false }) });

    const values = await produce(...invalid.map(([, r]) => r), ...valid, ['io.switchyard.event.Track', hidden]);
    // Over HTTP: checked and counted by ingest, so fan-out must not count it again. A screen call
    // keeps its properties and category all the way to the webhook body.
    const httpScreen = `http-screen-${randomUUID()}`;
    const http = await requestJson('POST', `${ingest.url}/v1/screen`, {
      body: { userId: 'u-http', messageId: httpScreen, name: 'Settings', category: 'Account', properties: { section: 'privacy' } },
      headers: { authorization: `Basic ${Buffer.from(`${source.writeKeys[0]}:`).toString('base64')}` },
    });
    assert.equal(http.status, 200, http.text);
    // Written by control: a delete notification, neither checked nor counted.
    const deletedUser = `deleted-${randomUUID()}`;
    const deletion = await api('POST', '/v1/deletions', { userId: deletedUser, sourceIds: [src] });
    assert.equal(deletion.status, 202, deletion.text);

    for (const [, v] of valid) await tasksFor(v.messageId);
    const [screenTask] = await tasksFor(httpScreen);
    const screenBody = JSON.parse(screenTask!.body);
    assert.deepEqual([screenBody.name, screenBody.category, screenBody.properties], ['Settings', 'Account', { section: 'privacy' }]);
    await reader.waitFor<DeliveryTask>(topics.delivery, (t) => t.eventType === 'delete' && JSON.parse(t.body).userId === deletedUser);
    // Written by audiences: the identify call for the buyer who joined.
    const [joined] = await reader.waitFor<DeliveryTask>(topics.delivery, (t) => t.eventType === 'identify' && JSON.parse(t.body).userId === buyer);
    assert.deepEqual(JSON.parse(joined!.body).traits, { direct_buyers: true });

    const refused = await reader.waitFor<InvalidEvent>(topics.invalidEvents, (v) => v.stage === 'fanout' && invalid.some(([, [, r]]) => r.messageId === v.messageId), invalid.length);
    invalid.forEach(([reason, [name, v]], i) => {
      const record = refused.find((r) => r.messageId === v.messageId);
      assert.ok(record, `${name} ${reason}: on invalid-events`);
      assert.deepEqual([record.reason, record.sourceId, record.originTopic], [reason, src, topics.ingest], `${name} ${reason}`);
      assert.ok(record.message.length > 0 && typeof record.originOffset === 'string');
      assert.ok(Buffer.from(record.payload).equals(values[i]!), 'the record value is kept whole');
      // Its decision was in the transaction that wrote the invalid record: no task can follow.
      assert.equal(reader.values<DeliveryTask>(topics.delivery, (t) => t.messageId === v.messageId).length, 0, `${name} ${reason}: no task`);
    });
    assert.equal(reader.values<DeliveryTask>(topics.delivery, (t) => t.messageId === hidden.messageId).length, 0);

    // Direct: 8 valid + 1 filtered accepted, 10 rejected; HTTP: 1 accepted (by ingest alone);
    // control's delete and audiences' identify: not calls of the source, not counted.
    const expected = { accepted: valid.length + 1 + 1, rejected: invalid.length, filtered: 1 };
    await eventually(usage, (u) => u.accepted >= expected.accepted && u.rejected >= expected.rejected && u.filtered >= expected.filtered);
    await sleep(1500); // several usage intervals: anything counted twice would show by now
    assert.deepEqual(await usage(), expected);

    const metrics = await (await fetch(`${fanout.url}/metrics`)).text();
    assert.match(metrics, new RegExp(`switchyard_usage_calls_total\\{[^}]*source="${src}"[^}]*outcome="accepted"[^}]*\\} ${valid.length + 1}\\n`));
    assert.match(metrics, new RegExp(`switchyard_usage_calls_total\\{[^}]*source="${src}"[^}]*outcome="rejected"[^}]*\\} ${invalid.length}\\n`));
    assert.match(metrics, /fanout_invalid_records_total\{reason="missing_user_id"[^}]*\} 4\n/);
  });
});
