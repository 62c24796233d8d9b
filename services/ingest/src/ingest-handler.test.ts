import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { AvroCodec } from '@switchyard/platform/codec/avro-codec';
import { ConfigState } from '@switchyard/platform/config-view/config-state';
import { recordBytes, type BatchingProducer, type OutgoingRecord } from '@switchyard/platform/kafka/batching-producer';
import { writtenBySwitchyard } from '@switchyard/platform/kafka/record-origin';
import { topicNames } from '@switchyard/platform/kafka/topics';
import { Registry } from '@switchyard/platform/metrics';
import type { HttpError } from '@switchyard/platform/http/error-catalogue';
import { handleIngest, type IngestDeps } from './ingest-handler.js';
import { ingestMetrics } from './ingest-metrics.js';
import { MAX_WRITE_BYTES } from './request-body.js';

const writeKey = 'wk_unit_test_0123456789';

/** The handler with a codec that writes JSON and a batcher that records what it was given. */
function setup(extra: Partial<IngestDeps> = {}) {
  const config = new ConfigState();
  config.apply('source:s1', { kind: 'source', value: { id: 's1', name: 'S', enabled: true, writeKeys: [writeKey], createdAt: 0, updatedAt: 0 } });
  const submitted: OutgoingRecord[][] = [];
  const deps: IngestDeps = {
    config,
    codec: { encode: (_schema: string, record: unknown) => Buffer.from(JSON.stringify(record)) } as unknown as AvroCodec,
    batcher: { submit: (records: OutgoingRecord[]) => { submitted.push(records); return { acked: Promise.resolve(), cancel: () => false }; } } as unknown as BatchingProducer,
    topics: topicNames('unit.'),
    metrics: ingestMetrics(new Registry()),
    clock: () => 1_700_000_000_000,
    newMessageId: () => '00000000-0000-4000-8000-000000000000',
    ackTimeoutMs: 1000,
    ...extra,
  };
  const post = (body: unknown) => handleIngest(deps, { route: 'batch', body: Buffer.from(JSON.stringify(body)), contentEncoding: undefined, authorization: `Basic ${Buffer.from(`${writeKey}:`).toString('base64')}`, ip: '127.0.0.1' });
  return { submitted, post, deps };
}

describe('handleIngest: what one request may write', () => {
  it('refuses a small body that enrichment would blow up (batch context merged into thousands of calls), before building it all and writing nothing', async () => {
    const { submitted, post } = setup();
    const body = { context: { pad: 'c'.repeat(30 * 1024) }, batch: Array.from({ length: 5000 }, () => ({ type: 'identify', userId: 'u' })) };
    await assert.rejects(post(body), (e: HttpError) => e.code === 'REQUEST_TOO_LARGE' && e.status === 400 && /768 KB/.test(e.message));
    assert.equal(submitted.length, 0);
  });

  it('accepts a request whose records stay within the write limit, in one submission', async () => {
    const { submitted, post } = setup();
    const batch = Array.from({ length: 15 }, () => ({ type: 'track', userId: 'u', event: 'E', properties: { pad: 'z'.repeat(30 * 1024) } }));
    assert.deepEqual(await post({ batch }), { success: true });
    assert.equal(submitted.length, 1);
    const bytes = submitted[0]!.reduce((n, r) => n + recordBytes(r), 0);
    assert.ok(bytes > 450 * 1024 && bytes <= MAX_WRITE_BYTES, String(bytes));
  });

  it('marks every call it writes to the ingest topic as its own, so fan-out neither checks nor counts it again', async () => {
    const { submitted, post } = setup();
    assert.deepEqual((await post({ batch: [{ type: 'track', userId: 'u', event: 'E' }, { type: 'track', userId: 'u' }] })).rejected?.length, 1);
    const [ingested, invalid] = [submitted[0]!.filter((r) => r.topic === 'unit.ingest'), submitted[0]!.filter((r) => r.topic === 'unit.invalid-events')];
    assert.equal(ingested.length, 1);
    assert.equal(invalid.length, 1);
    assert.deepEqual(ingested[0]!.headers, { 'switchyard-origin': 'ingest' });
    assert.ok(writtenBySwitchyard({ 'switchyard-origin': Buffer.from(ingested[0]!.headers!['switchyard-origin']!) }));
  });
});

describe('handleIngest: before the configuration is loaded', () => {
  it('answers 503 NOT_READY (the client retries) instead of judging the write key, and writes nothing', async () => {
    let loaded = false;
    const { submitted, post } = setup({ configLoaded: () => loaded });
    await assert.rejects(post({ batch: [{ type: 'track', userId: 'u', event: 'E' }] }), (e: HttpError) => e.code === 'NOT_READY' && e.status === 503);
    assert.equal(submitted.length, 0);
    loaded = true;
    assert.deepEqual(await post({ batch: [{ type: 'track', userId: 'u', event: 'E' }] }), { success: true });
  });
});

describe('handleIngest: a write key the configuration does not know', () => {
  const postWith = (extra: Partial<IngestDeps>, key: string) => {
    const { submitted, deps } = setup(extra);
    return { submitted, done: handleIngest(deps, { route: 'track', body: Buffer.from(JSON.stringify({ userId: 'u', event: 'E' })), contentEncoding: undefined, authorization: `Basic ${Buffer.from(`${key}:`).toString('base64')}`, ip: undefined }) };
  };
  it('503 CONFIG_BEHIND while the view is not known to be current, asked as of the request, and nothing written', async () => {
    const asked: number[] = [];
    const { submitted, done } = postWith({ configCurrent: async (since) => { asked.push(since); return false; } }, 'wk_created_meanwhile');
    await assert.rejects(done, (e: HttpError) => e.status === 503 && e.code === 'CONFIG_BEHIND');
    assert.deepEqual(asked, [1_700_000_000_000]);
    assert.equal(submitted.length, 0);
  });
  it('401 INVALID_WRITE_KEY once the view is current', async () => {
    const { done } = postWith({ configCurrent: async () => true }, 'wk_unknown');
    await assert.rejects(done, (e: HttpError) => e.status === 401 && e.code === 'INVALID_WRITE_KEY');
  });
});

describe('handleIngest: metric labels', () => {
  it('counts a refused call under its type only if that is a call type: any other type the client sends is "unknown", not a series of its own', async () => {
    const { post, deps } = setup();
    const batch = [
      ...Array.from({ length: 500 }, (_, i) => ({ type: `made-up-${i}`, userId: 'u' })),
      { type: 'track', userId: 'u' }, { userId: 'u' }, { type: 42, userId: 'u' },
    ];
    assert.equal((await post({ batch })).rejected?.length, 503);
    const { values } = await deps.metrics.rejected.get();
    const byType = new Map<string, number>();
    for (const v of values) byType.set(String(v.labels.type), (byType.get(String(v.labels.type)) ?? 0) + v.value);
    assert.deepEqual(Object.fromEntries(byType), { unknown: 502, track: 1 });
  });
});
