import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { AvroCodec, Decoded } from '@switchyard/platform/codec/avro-codec';
import { FakeConsumerClient } from '@switchyard/platform/consuming/test-support/fake-consumer-client';
import { createLogger } from '@switchyard/platform/logger';
import { createMetricsRegistry } from '@switchyard/platform/metrics';
import type { LiveCall } from './live-call.js';
import { LiveTail, type LiveSubscriber } from './live-tail.js';

/** Decodes a record's value, JSON here, as a track call of the source it names. */
const codec = {
  decode: async (value: Buffer | null): Promise<Decoded> => {
    const { sourceId, messageId } = JSON.parse(String(value)) as { sourceId: string; messageId: string };
    return { name: 'io.switchyard.event.Track', schemaId: 1, value: { sourceId, messageId, event: 'Opened', userId: 'u1', anonymousId: null, timestamp: 0, receivedAt: 0 } } as unknown as Decoded;
  },
} as unknown as AvroCodec;

function viewer(sourceId: string): LiveSubscriber & { readyCount: number; calls: LiveCall[]; ended: string[] } {
  const v = {
    sourceId, readyCount: 0, calls: [] as LiveCall[], ended: [] as string[],
    onReady: () => { v.readyCount++; },
    onCall: (call: LiveCall) => { v.calls.push(call); },
    onEnd: (reason: string) => { v.ended.push(reason); },
  };
  return v;
}

function tail(): { live: LiveTail; clients: FakeConsumerClient[] } {
  const clients: FakeConsumerClient[] = [];
  const live = new LiveTail({
    newConsumer: (groupId) => { const c = new FakeConsumerClient(groupId); clients.push(c); return c; },
    codec, topic: 'ingest', logger: createLogger({ service: 'test', level: 'silent' }), metrics: createMetricsRegistry('control'), idleStopMs: 10,
  });
  return { live, clients };
}

const settle = () => new Promise((resolve) => setImmediate(resolve));
const record = (offset: string, sourceId: string) => ({ offset, key: Buffer.from(`${sourceId}:u1`), value: Buffer.from(JSON.stringify({ sourceId, messageId: `m${offset}` })) });

describe('live tail', () => {
  it('reads from the latest offsets in a group of its own, is ready at the first fetch after joining, and hands each viewer its source\'s calls', async () => {
    const { live, clients } = tail();
    const a = viewer('src-a');
    const b = viewer('src-b');
    live.subscribe(a);
    live.subscribe(b);
    await settle();
    assert.equal(clients.length, 1, 'one consumer for every viewer');
    const client = clients[0]!;
    assert.match(client.groupId, /live/);
    assert.deepEqual(client.subscribed, { topics: ['ingest'], from: 'latest' });
    client.fetch();
    assert.equal(a.readyCount, 0, 'not ready before joining');
    client.assign('m1', { ingest: [0] });
    client.fetch();
    client.fetch();
    assert.deepEqual([a.readyCount, b.readyCount], [1, 1]);
    await client.deliver('ingest', 0, [record('5', 'src-a'), record('6', 'src-b'), record('7', 'src-c')]);
    assert.deepEqual(a.calls.map((c) => c.messageId), ['m5']);
    assert.deepEqual(b.calls.map((c) => c.messageId), ['m6']);
    assert.equal(client.commits.length, 0, 'commits nothing');
    await live.stop();
    assert.deepEqual([a.ended, b.ended], [['shutdown'], ['shutdown']]);
    assert.ok(client.disconnected);
  });

  it('stops its consumer once the last viewer has left, and a crash it does not recover from ends every stream', async () => {
    const { live, clients } = tail();
    const unsubscribe = live.subscribe(viewer('src-a'));
    await settle();
    unsubscribe();
    await new Promise((resolve) => setTimeout(resolve, 30));
    assert.ok(clients[0]!.disconnected, 'stopped after idleStopMs');
    assert.equal(live.running, false);

    const v = viewer('src-a');
    live.subscribe(v);
    await settle();
    const client = clients[1]!;
    client.crash(new Error('restartable'), true);
    assert.deepEqual(v.ended, []);
    client.crash(new Error('gone'), false);
    await settle();
    assert.deepEqual(v.ended, ['consumer_failed']);
    assert.ok(client.disconnected);
    await live.stop();
  });
});
