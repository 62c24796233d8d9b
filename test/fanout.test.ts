// Fan-out against the real broker: the exact webhook body of each type, the integrations rules,
// one task per enabled destination, invalid records set aside, deletion requests, and exactly-once
// task production across SIGKILLs.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { AvroRecordTypes } from '@switchyard/platform/codec/avro-codec';
import { frame } from '@switchyard/platform/codec/wire-format';
import { topicNames } from '@switchyard/platform/kafka/topics';
import type { ConsumedPosition, DeliveryTask } from '@switchyard/platform/schemas/generated';
import { makeDestination, makeSource, writeConfig } from './support/config.js';
import { requestJson } from './support/http.js';
import { pipelineEnv, setupTopics, startInstances, startService, type RunningService } from './support/services.js';
import { uniquePrefix } from './support/stack.js';
import { EVENT_TIME, PipelineWriter, event, type EventName } from './support/pipeline-writer.js';
import { TopicReader } from './support/topic-reader.js';

const T = EVENT_TIME;

/** Where the copies of tasks written more than once are, and how often their events are in the ingest topic: tells a fan-out duplicate (event once) from a duplicated input. */
function explainDuplicates(reader: TopicReader, topics: ReturnType<typeof topicNames>, duplicated: Array<[string, number]>): string {
  const copies = new Map<string, string[]>();
  for (const r of reader.records) {
    if (r.topic !== topics.delivery || !r.decoded) continue;
    const t = r.decoded.value as DeliveryTask;
    if (duplicated.some(([id]) => id === t.taskId)) copies.set(t.taskId, [...(copies.get(t.taskId) ?? []), `${r.partition}/${r.offset}@${new Date(t.createdAt).toISOString().slice(11, 23)}`]);
  }
  const inIngest = (messageId: string) => reader.records.filter((r) => r.topic === topics.ingest && (r.decoded?.value as { messageId?: string } | undefined)?.messageId === messageId).map((r) => `${r.partition}/${r.offset}`);
  return duplicated.slice(0, 6).map(([id]) => `${id}: tasks ${copies.get(id)?.join(' and ')}; event at ${inIngest(id.split(':')[0]!).join(', ')}`).join('\n# ');
}

describe('fan-out: ingest topic to delivery tasks', () => {
  const prefix = uniquePrefix('fanout');
  const topics = topicNames(prefix);
  const token = `fanout-admin-${randomUUID()}`;
  const two = makeSource({ name: 'Two destinations' });
  const twoA = makeDestination(two.id, { name: 'A' });
  const twoB = makeDestination(two.id, { name: 'B' });
  const one = makeSource({ name: 'One destination' });
  const oneD = makeDestination(one.id);
  const disabledDest = makeSource({ name: 'Disabled destination' });
  const disabledDestD = makeDestination(disabledDest.id, { enabled: false });
  const disabledSource = makeSource({ name: 'Disabled source', enabled: false });
  const disabledSourceD = makeDestination(disabledSource.id);
  let fanout: RunningService;
  let control: RunningService;
  let reader: TopicReader;
  let writer: PipelineWriter;
  const tasksFor = (messageId: string, count = 1) => reader.waitFor<DeliveryTask>(topics.delivery, (t) => t.messageId === messageId, count);

  before(async () => {
    const env = pipelineEnv(prefix, { SWITCHYARD_ADMIN_TOKEN: token });
    await setupTopics(env);
    await writeConfig(prefix, { sources: [two, one, disabledDest, disabledSource], destinations: [twoA, twoB, oneD, disabledDestD, disabledSourceD] });
    [fanout, control] = await Promise.all([startService('fanout', env), startService('control', env)]);
    reader = await new TopicReader([topics.delivery, topics.invalidEvents]).start();
    writer = await new PipelineWriter().start();
  });
  after(async () => {
    await writer?.stop();
    await reader?.stop();
    await Promise.all([fanout?.stop(), control?.stop()]);
  });

  it('each of the seven types yields a task whose body is exactly the document\'s shape', async () => {
    const src = one.id;
    const ctx = JSON.stringify({ device: { model: 'iPhone', type: 'ios' }, os: { name: 'iOS', version: '17.1' }, app: { build: '42', name: 'Shop', version: '2.0' } });
    const cases: Array<[EventName, AvroRecordTypes[EventName], Record<string, unknown>]> = [];
    const add = <N extends EventName>(name: N, v: AvroRecordTypes[N], expected: Record<string, unknown>) => cases.push([name, v, expected]);
    const track = event('io.switchyard.event.Track', { sourceId: src, event: 'Order Completed', properties: JSON.stringify({ revenue: 9.99, note: 'café ☕' }) });
    add('io.switchyard.event.Track', track, { version: 1, type: 'track', messageId: track.messageId, userId: 'user-1', event: 'Order Completed', properties: { revenue: 9.99, note: 'café ☕' }, timestamp: '2026-11-22T10:00:00.123Z' });
    const page = event('io.switchyard.event.Page', { sourceId: src, name: 'Pricing', category: 'Docs', properties: JSON.stringify({ path: '/pricing', referrer: 'https://a.test/', title: 'Pricing', url: 'https://x.test/pricing', extra: 1 }) });
    add('io.switchyard.event.Page', page, { version: 1, type: 'page', messageId: page.messageId, userId: 'user-1', properties: { path: '/pricing', referrer: 'https://a.test/', title: 'Pricing', url: 'https://x.test/pricing', extra: 1 }, name: 'Pricing', category: 'Docs', timestamp: '2026-11-22T10:00:00.123Z' });
    const screen = event('io.switchyard.event.Screen', { sourceId: src, name: 'Home', category: 'Feed', properties: JSON.stringify({ tab: 'feed' }), context: ctx });
    add('io.switchyard.event.Screen', screen, { version: 1, type: 'screen', messageId: screen.messageId, userId: 'user-1', properties: { tab: 'feed' }, name: 'Home', category: 'Feed', timestamp: '2026-11-22T10:00:00.123Z', context: JSON.parse(ctx) });
    const identify = event('io.switchyard.event.Identify', { sourceId: src, traits: JSON.stringify({ email: 'ada@example.com', name: 'Ada' }) });
    add('io.switchyard.event.Identify', identify, { version: 1, type: 'identify', messageId: identify.messageId, userId: 'user-1', traits: { email: 'ada@example.com', name: 'Ada' }, timestamp: '2026-11-22T10:00:00.123Z' });
    const group = event('io.switchyard.event.Group', { sourceId: src, groupId: 'g-1', traits: JSON.stringify({ plan: 'pro' }) });
    add('io.switchyard.event.Group', group, { version: 1, type: 'group', messageId: group.messageId, userId: 'user-1', groupId: 'g-1', traits: { plan: 'pro' }, timestamp: '2026-11-22T10:00:00.123Z' });
    const alias = event('io.switchyard.event.Alias', { sourceId: src, userId: 'user-1', previousId: 'anon-1' });
    add('io.switchyard.event.Alias', alias, { version: 1, type: 'alias', messageId: alias.messageId, 'Previous ID': 'anon-1', 'User ID': 'user-1', timestamp: '2026-11-22T10:00:00.123Z' });
    const del = event('io.switchyard.event.Delete', { sourceId: src, requestId: 'del_1' });
    add('io.switchyard.event.Delete', del, { type: 'delete', userId: 'user-1', timestamp: '2026-11-22T10:00:00.123Z' });

    await writer.events(topics.ingest, ...cases.map(([name, v]) => [name, v] as [EventName, AvroRecordTypes[EventName]]));
    for (const [, v, expected] of cases) {
      const [task] = await tasksFor(v.messageId);
      assert.deepEqual(JSON.parse(task!.body), expected, String(expected.type));
      assert.equal(task!.body, JSON.stringify(JSON.parse(task!.body)), 'the body re-stringifies to itself (receivers verify signatures that way)');
      assert.deepEqual([task!.destinationId, task!.sourceId, task!.messageId, task!.taskId, task!.attempt, task!.receivedAt], [oneD.id, src, v.messageId, `${v.messageId}:${oneD.id}`, 0, T + 5]);
      assert.ok(!('userId' in expected) || expected.type === 'delete' || JSON.parse(task!.body).userId === 'user-1');
    }
    const [aliasTask] = await tasksFor(alias.messageId);
    assert.equal(aliasTask!.body, `{"version":1,"type":"alias","messageId":"${alias.messageId}","Previous ID":"anon-1","User ID":"user-1","timestamp":"2026-11-22T10:00:00.123Z"}`);
    const [deleteTask] = await tasksFor(del.messageId);
    assert.equal(deleteTask!.body, '{"type":"delete","userId":"user-1","timestamp":"2026-11-22T10:00:00.123Z"}');
    const record = reader.records.find((r) => (r.decoded?.value as DeliveryTask | undefined)?.messageId === track.messageId);
    assert.equal(record?.key, `${oneD.id}:user-1`, 'task key: destination and user');
  });

  it('integrations: All false/true/absent × Webhooks false/true/absent, keys are case-sensitive', async () => {
    const matrix: Array<[Record<string, unknown> | null, boolean]> = [
      [null, true], [{}, true],
      [{ All: true }, true], [{ All: false }, false],
      [{ Webhooks: true }, true], [{ Webhooks: false }, false],
      [{ All: true, Webhooks: true }, true], [{ All: true, Webhooks: false }, false],
      [{ All: false, Webhooks: true }, true], [{ All: false, Webhooks: false }, false],
      [{ All: false, webhooks: true }, false], [{ All: false, WEBHOOKS: true }, false], [{ webhooks: false }, true],
    ];
    const events = matrix.map(([integrations]) => event('io.switchyard.event.Track', { sourceId: one.id, event: 'Matrix', properties: null, integrations: integrations && JSON.stringify(integrations) }));
    await writer.events(topics.ingest, ...events.map((e) => ['io.switchyard.event.Track', e] as [EventName, AvroRecordTypes[EventName]]));
    // A last event proves the ones before it were all processed.
    const last = event('io.switchyard.event.Track', { sourceId: one.id, event: 'End', properties: null });
    await writer.events(topics.ingest, ['io.switchyard.event.Track', last]);
    await tasksFor(last.messageId);
    matrix.forEach(([integrations, delivered], i) => {
      const got = reader.values<DeliveryTask>(topics.delivery, (t) => t.messageId === events[i]!.messageId).length;
      assert.equal(got, delivered ? 1 : 0, `integrations ${JSON.stringify(integrations)}`);
    });
  });

  it('two destinations → two tasks; a disabled destination or source → none; filtered reasons counted', async () => {
    const toTwo = event('io.switchyard.event.Identify', { sourceId: two.id, traits: null });
    const toDisabledDest = event('io.switchyard.event.Identify', { sourceId: disabledDest.id, traits: null });
    const toDisabledSource = event('io.switchyard.event.Identify', { sourceId: disabledSource.id, traits: null });
    const toUnknown = event('io.switchyard.event.Identify', { sourceId: 'src_unknown', traits: null });
    await writer.events(topics.ingest, ...[toDisabledDest, toDisabledSource, toUnknown, toTwo].map((e) => ['io.switchyard.event.Identify', e] as [EventName, AvroRecordTypes[EventName]]));
    const tasks = await tasksFor(toTwo.messageId, 2);
    assert.deepEqual(tasks.map((t) => t.destinationId).sort(), [twoA.id, twoB.id].sort());
    assert.equal(tasks[0]!.body, tasks[1]!.body);
    await sleep(500);
    for (const e of [toDisabledDest, toDisabledSource, toUnknown]) assert.equal(reader.values<DeliveryTask>(topics.delivery, (t) => t.messageId === e.messageId).length, 0);
    const metrics = await (await fetch(`${fanout.url}/metrics`)).text();
    // Every reason starts at 0: each of these was counted.
    for (const reason of ['no_destination', 'source_disabled', 'source_unknown', 'integrations']) assert.match(metrics, new RegExp(`fanout_events_filtered_total\\{reason="${reason}"[^}]*\\} [1-9]`), reason);
    assert.match(metrics, new RegExp(`fanout_tasks_produced_total\\{destination="${twoA.id}"`));
    assert.match(metrics, /fanout_transaction_seconds_count/);
    assert.match(metrics, /fanout_consumer_lag\{partition=/);
  });

  it('a garbage record and an unknown schema id go to invalid-events; the events after them are processed', async () => {
    const key = `${one.id}:user-1`;
    await writer.raw(topics.ingest, key, Buffer.from('definitely not avro'));
    await writer.raw(topics.ingest, key, frame(987654, Buffer.from([2, 4, 6])));
    const after = event('io.switchyard.event.Track', { sourceId: one.id, event: 'After garbage', properties: null });
    await writer.events(topics.ingest, ['io.switchyard.event.Track', after]);
    await tasksFor(after.messageId);
    const invalid = await reader.waitFor<Record<string, unknown>>(topics.invalidEvents, (v) => v.stage === 'fanout', 2);
    assert.deepEqual(invalid.map((v) => v.reason).sort(), ['undecodable', 'unknown_schema']);
    assert.ok(invalid.every((v) => v.originTopic === topics.ingest && typeof v.originOffset === 'string'));
    assert.ok(invalid.some((v) => (v.payload as Buffer).toString() === 'definitely not avro'));
  });

  it('a deletion request → one delete task per affected source with webhooks enabled', async () => {
    const userId = `to-delete-${randomUUID()}`;
    const res = await requestJson('POST', `${control.url}/v1/deletions`, { token, body: { userId } });
    assert.equal(res.status, 202, res.text);
    assert.deepEqual(res.body.sourceIds.sort(), [two.id, one.id].sort());
    assert.equal(res.body.notifications, 2);
    const tasks = await reader.waitFor<DeliveryTask>(topics.delivery, (t) => t.eventType === 'delete' && JSON.parse(t.body).userId === userId, 3);
    assert.deepEqual(tasks.map((t) => t.destinationId).sort(), [twoA.id, twoB.id, oneD.id].sort());
    assert.ok(tasks.every((t) => Object.keys(JSON.parse(t.body)).join() === 'type,userId,timestamp'));

    const named = await requestJson('POST', `${control.url}/v1/deletions`, { token, body: { userId, sourceIds: [one.id, disabledDest.id] } });
    assert.deepEqual([named.status, named.body.notifications, named.body.sourceIds], [202, 1, [one.id]]);
    const bad = await requestJson('POST', `${control.url}/v1/deletions`, { token, body: { sourceIds: ['src_nope'] } });
    assert.deepEqual([bad.status, bad.body.field], [400, 'userId']);
    const unknown = await requestJson('POST', `${control.url}/v1/deletions`, { token, body: { userId, sourceIds: ['src_nope'] } });
    assert.deepEqual([unknown.status, unknown.body.code], [400, 'UNKNOWN_SOURCE']);
  });
});

describe('fan-out crash test: SIGKILL mid-stream, exactly one task per event and destination', () => {
  const prefix = uniquePrefix('fanout-crash');
  const topics = topicNames(prefix);
  const source = makeSource();
  const destinations = [makeDestination(source.id), makeDestination(source.id)];

  it('3000 events, fan-out killed three times while they flow: none lost, none duplicated (read_committed)', async () => {
    const env = pipelineEnv(prefix);
    await setupTopics(env);
    await writeConfig(prefix, { sources: [source], destinations });
    let fanout = await startService('fanout', env);
    const writer = await new PipelineWriter().start();
    const total = 3000;
    const ids: string[] = [];
    const producing = (async () => {
      for (let i = 0; i < total; i += 50) {
        const batch = Array.from({ length: 50 }, (_, j) => event('io.switchyard.event.Track', { sourceId: source.id, userId: `u${(i + j) % 37}`, event: 'Tick', properties: null }));
        ids.push(...batch.map((e) => e.messageId));
        await writer.events(topics.ingest, ...batch.map((e) => ['io.switchyard.event.Track', e] as [EventName, AvroRecordTypes[EventName]]));
        await sleep(40);
      }
    })();
    let kills = 0;
    for (; kills < 3; kills++) {
      await sleep(600 + Math.floor(Math.random() * 900));
      assert.equal(await fanout.stop('SIGKILL'), 'SIGKILL');
      fanout = await startService('fanout', env);
    }
    await producing;
    await writer.stop();

    const reader = await new TopicReader([topics.delivery, topics.ingest, topics.fanoutPositions]).start();
    try {
      await reader.waitFor<DeliveryTask>(topics.delivery, () => true, total * destinations.length, 90_000);
      await sleep(2000); // anything duplicated would have arrived by now
      const counts = new Map<string, number>();
      for (const t of reader.values<DeliveryTask>(topics.delivery)) counts.set(t.taskId, (counts.get(t.taskId) ?? 0) + 1);
      const expected = ids.flatMap((id) => destinations.map((d) => `${id}:${d.id}`));
      const missing = expected.filter((k) => !counts.has(k));
      const duplicated = [...counts].filter(([, n]) => n > 1);
      console.log(`# fan-out crash test: ${kills} SIGKILLs, ${total} events, ${counts.size} distinct tasks, ${missing.length} missing, ${duplicated.length} duplicated`);
      if (duplicated.length) console.log(`# ${explainDuplicates(reader, topics, duplicated)}`);
      assert.equal(missing.length, 0);
      assert.equal(duplicated.length, 0);
      assert.equal(counts.size, expected.length);
      // Each delivery partition is written by one ingest partition's transactions (task-partitions.ts).
      const ingestPartition = new Map(reader.records.filter((r) => r.topic === topics.ingest).map((r) => [(r.decoded?.value as { messageId?: string } | undefined)?.messageId, r.partition]));
      const tasks = reader.records.filter((r) => r.topic === topics.delivery && r.decoded);
      assert.ok(new Set(tasks.map((r) => r.partition)).size > 1, 'tasks in more than one partition');
      assert.deepEqual(tasks.filter((r) => r.partition !== ingestPartition.get((r.decoded!.value as DeliveryTask).messageId)).map((r) => `${r.partition}/${r.offset}`), []);
      // The positions, committed with the tasks: each ingest partition's last one is past its last record.
      const ingestEnds = new Map<number, number>();
      for (const r of reader.records) if (r.topic === topics.ingest) ingestEnds.set(r.partition, Math.max(ingestEnds.get(r.partition) ?? 0, Number(r.offset) + 1));
      const positions = new Map<number, number>();
      for (const r of reader.records) if (r.topic === topics.fanoutPositions) positions.set(r.partition, (r.decoded!.value as ConsumedPosition).next);
      assert.deepEqual([...positions].sort(), [...ingestEnds].sort());
    } finally {
      await reader.stop();
      await fanout.stop();
    }
  });
});

describe('fan-out across rebalances: an instance paused past its session timeout (SIGSTOP) resumes fenced', () => {
  const prefix = uniquePrefix('fanout-pause');
  const topics = topicNames(prefix);
  const source = makeSource();
  const destinations = [makeDestination(source.id), makeDestination(source.id)];

  // The scenario behind docs/decisions/0011-transactional-id-per-partition.md: a paused instance (a
  // long GC pause, a starved node) loses its partitions to the others, then resumes and commits the
  // transaction it had open. With one transactional id per instance that wrote every such batch
  // twice (15 % of tasks); with one per partition the new owner's InitProducerId fences it, and the
  // batch is written once.
  it('three instances, one paused for 14 s (session timeout 10 s) twice while events flow: every task exactly once (read_committed)', async () => {
    const env = pipelineEnv(prefix, { SWITCHYARD_PARTITIONS: '6', LOG_LEVEL: 'info' });
    await setupTopics(env);
    await writeConfig(prefix, { sources: [source], destinations });
    const fanouts = await startInstances('fanout', env, 3);
    const writer = await new PipelineWriter().start();
    const ids: string[] = [];
    let producing = true;
    const produced = (async () => {
      for (let i = 0; producing; i += 40) {
        const batch = Array.from({ length: 40 }, (_, j) => event('io.switchyard.event.Track', { sourceId: source.id, userId: `u${(i + j) % 101}`, event: 'Tick', properties: null }));
        ids.push(...batch.map((e) => e.messageId));
        await writer.events(topics.ingest, ...batch.map((e) => ['io.switchyard.event.Track', e] as [EventName, AvroRecordTypes[EventName]]));
        await sleep(200);
      }
    })();
    const reader = await new TopicReader([topics.delivery, topics.ingest]).start();
    try {
      for (const victim of [fanouts[0]!, fanouts[1]!]) {
        await sleep(3000);
        victim.proc.child.kill('SIGSTOP');
        await sleep(14_000);
        victim.proc.child.kill('SIGCONT');
      }
      await sleep(3000);
      producing = false;
      await produced;
      await writer.stop();
      const total = ids.length * destinations.length;
      await reader.waitFor<DeliveryTask>(topics.delivery, () => true, total, 90_000);
      await sleep(3000); // a duplicate from a resumed instance would have arrived by now
      const counts = new Map<string, number>();
      for (const t of reader.values<DeliveryTask>(topics.delivery)) counts.set(t.taskId, (counts.get(t.taskId) ?? 0) + 1);
      const expected = ids.flatMap((id) => destinations.map((d) => `${id}:${d.id}`));
      const missing = expected.filter((k) => !counts.has(k));
      const duplicated = [...counts].filter(([, n]) => n > 1);
      console.log(`# fan-out pause test: 2 pauses of 14 s, ${ids.length} events, ${counts.size} distinct tasks, ${missing.length} missing, ${duplicated.length} written more than once`);
      if (duplicated.length) console.log(`# ${explainDuplicates(reader, topics, duplicated)}`);
      assert.equal(missing.length, 0);
      assert.equal(duplicated.length, 0);
    } finally {
      producing = false;
      await reader.stop();
      await Promise.all(fanouts.map((f) => { f.proc.child.kill('SIGCONT'); return f.stop(); }));
    }
  });
});

describe('fan-out: a burst of large events, more than the broker takes in one record batch', () => {
  const prefix = uniquePrefix('fanout-large');
  const topics = topicNames(prefix);
  const wide = makeSource({ name: 'Four destinations' });
  const wideDs = ['W1', 'W2', 'W3', 'W4'].map((name) => makeDestination(wide.id, { name }));
  let fanout: RunningService;
  let reader: TopicReader;
  let writer: PipelineWriter;

  before(async () => {
    const env = pipelineEnv(prefix);
    await setupTopics(env);
    await writeConfig(prefix, { sources: [wide], destinations: wideDs });
    fanout = await startService('fanout', env);
    reader = await new TopicReader([topics.delivery]).start();
    writer = await new PipelineWriter().start();
  });
  after(async () => {
    await writer?.stop();
    await reader?.stop();
    await fanout?.stop();
  });

  it('32 events of 30 KB from one user to four destinations: every task written', async () => {
    // Fan-out reads up to 1 MB of one key's events at once and writes four tasks for each. With
    // three partitions two destinations share one: about 2 MB for one partition in one transaction,
    // which the broker refuses (max.message.bytes, 1 MB) unless the produce requests are split by size.
    const properties = JSON.stringify({ blob: 'x'.repeat(30_000) });
    const events = Array.from({ length: 32 }, () => event('io.switchyard.event.Track', { sourceId: wide.id, userId: 'big-user', event: 'Large', properties }));
    for (let i = 0; i < events.length; i += 8) await writer.events(topics.ingest, ...events.slice(i, i + 8).map((e) => ['io.switchyard.event.Track', e] as [EventName, AvroRecordTypes[EventName]]));
    for (const e of events) {
      const tasks = await reader.waitFor<DeliveryTask>(topics.delivery, (t) => t.messageId === e.messageId, 4, 30_000);
      assert.deepEqual(tasks.map((t) => t.destinationId).sort(), wideDs.map((d) => d.id).sort());
    }
  });
});
