import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance, InjectOptions } from 'fastify';
import type { AvroCodec } from '@switchyard/platform/codec/avro-codec';
import { ConfigState } from '@switchyard/platform/config-view/config-state';
import { createServer } from '@switchyard/platform/http/server';
import type { BatchingProducer } from '@switchyard/platform/kafka/batching-producer';
import { topicNames } from '@switchyard/platform/kafka/topics';
import { Lifecycle } from '@switchyard/platform/lifecycle';
import { createLogger } from '@switchyard/platform/logger';
import { createMetricsRegistry } from '@switchyard/platform/metrics';
import { catalogueRows, documentedErrors } from '@switchyard/platform/test-support/error-docs';
import { browserEndpoint } from './browser-settings.js';
import { ingestMetrics } from './ingest-metrics.js';
import { openApiDocument } from './openapi.js';
import { trackingApi } from './routes.js';
import { settingsErrors, trackingErrors } from './tracking-errors.js';

const writeKey = 'wk_unit_test_0123456789';
const basic = { authorization: `Basic ${Buffer.from(`${writeKey}:`).toString('base64')}` };

/** The tracking API as ingest serves it, over one enabled source; the batcher acknowledges everything. */
async function ingestApp(): Promise<FastifyInstance> {
  const logger = createLogger({ service: 'test', level: 'silent' });
  const registry = createMetricsRegistry('ingest');
  const config = new ConfigState();
  config.apply('source:s1', { kind: 'source', value: { id: 's1', name: 'S', enabled: true, writeKeys: [writeKey], createdAt: 0, updatedAt: 0 } });
  config.apply('source:s2', { kind: 'source', value: { id: 's2', name: 'Off', enabled: false, writeKeys: ['wk_off'], createdAt: 0, updatedAt: 0 } });
  const app = createServer({ logger, metrics: registry, readiness: new Lifecycle(logger).readiness, errors: trackingErrors });
  await trackingApi(app, {
    browser: browserEndpoint('http://127.0.0.1:8080'),
    config,
    codec: { encode: (_schema: string, record: unknown) => Buffer.from(JSON.stringify(record)) } as unknown as AvroCodec,
    batcher: { submit: () => ({ acked: Promise.resolve(), cancel: () => false }) } as unknown as BatchingProducer,
    topics: topicNames('unit.'),
    metrics: ingestMetrics(registry),
    clock: Date.now,
    newMessageId: () => '00000000-0000-4000-8000-000000000000',
    ackTimeoutMs: 1000,
  });
  await app.ready();
  return app;
}

describe('the tracking API\'s error catalogue', () => {
  it('lists every code with each status it is answered with in docs/tracking-api.md ("Errors"), and no other', () => {
    assert.deepEqual(documentedErrors(new URL('../../../docs/tracking-api.md', import.meta.url)), catalogueRows(trackingErrors, settingsErrors));
  });

  it('is the enum of Error.code in the OpenAPI document', () => {
    const schemas = (openApiDocument() as { components: { schemas: { Error: { properties: { code: { enum: string[] } } } } } }).components.schemas;
    assert.deepEqual(new Set(schemas.Error.properties.code.enum), new Set([...trackingErrors.codes, ...settingsErrors.codes]));
  });

  it('keeps the statuses clients act on (docs/decisions/0002-tracking-api-limits-and-rejections.md): no 413, write keys 401 on the tracking paths and 404 on the settings', () => {
    assert.ok(trackingErrors.codes.every((code) => trackingErrors.entries[code as keyof typeof trackingErrors.entries].status !== 413));
    assert.deepEqual([trackingErrors.entries.INVALID_WRITE_KEY.status, trackingErrors.entries.SOURCE_DISABLED.status, trackingErrors.entries.MISSING_WRITE_KEY.status], [401, 401, 401]);
    assert.deepEqual([settingsErrors.entries.INVALID_WRITE_KEY.status, settingsErrors.entries.SOURCE_DISABLED.status], [404, 404]);
  });
});

describe('tracking API error answers', () => {
  let app: FastifyInstance;
  before(async () => { app = await ingestApp(); });
  after(() => app.close());

  const post = (url: string, payload: string | Buffer, headers: Record<string, string> = {}): InjectOptions => ({ method: 'POST', url, headers: { ...basic, 'content-type': 'application/json', ...headers }, payload });
  const cases: Array<[what: string, request: InjectOptions, status: number, code: string]> = [
    ['an unknown route', { method: 'GET', url: '/nope' }, 404, 'NOT_FOUND'],
    ['a method the tracking paths do not answer', { method: 'DELETE', url: '/v1/track', headers: { 'content-type': 'application/json' } }, 404, 'NOT_FOUND'],
    ['an empty JSON body to an unknown path', post('/v1/nope', ''), 404, 'NOT_FOUND'],
    ['JSON that does not parse', post('/v1/batch', '{"batch":'), 400, 'INVALID_JSON'],
    ['an empty body to a tracking path', post('/v1/track', ''), 400, 'INVALID_JSON'],
    ['a body over 500 KB', post('/v1/batch', JSON.stringify({ batch: [], pad: 'x'.repeat(600 * 1024) })), 400, 'BODY_TOO_LARGE'],
    ['a body that is no object', post('/v1/batch', '[1]'), 400, 'INVALID_BODY'],
    ['no batch array', post('/v1/batch', '{"calls":[]}'), 400, 'INVALID_BATCH'],
    ['an unknown Content-Encoding', post('/v1/batch', '{}', { 'content-encoding': 'compress' }), 400, 'UNSUPPORTED_ENCODING'],
    ['a single call that breaks a rule', post('/v1/track', '{"userId":"u"}'), 400, 'MISSING_EVENT'],
    ['no write key', { method: 'POST', url: '/v1/track', headers: { 'content-type': 'text/plain' }, payload: '{"userId":"u","event":"E"}' }, 401, 'MISSING_WRITE_KEY'],
    ['an unknown write key', post('/v1/track', '{"userId":"u","event":"E","writeKey":"wk_nope"}', { authorization: '' }), 401, 'INVALID_WRITE_KEY'],
    ['the settings of an unknown write key', { method: 'GET', url: '/v1/projects/wk_nope/settings', headers: { 'content-type': 'application/json' } }, 404, 'INVALID_WRITE_KEY'],
    ['the settings of a disabled source', { method: 'GET', url: '/v1/projects/wk_off/settings' }, 404, 'SOURCE_DISABLED'],
  ];
  for (const [what, request, status, code] of cases) {
    it(`${what}: ${status} ${code}, as {code, message}`, async () => {
      const res = await app.inject(request);
      assert.equal(res.statusCode, status, res.body);
      assert.match(String(res.headers['content-type']), /^application\/json/);
      const body = res.json() as Record<string, unknown>;
      assert.deepEqual(Object.keys(body).sort(), ['code', 'message'], res.body);
      assert.equal(body.code, code);
      assert.equal(typeof body.message, 'string');
    });
  }

  it('a body over the limit names the tracking API\'s limit', async () => {
    const res = await app.inject(post('/v1/batch', JSON.stringify({ batch: [], pad: 'x'.repeat(600 * 1024) })));
    assert.deepEqual(res.json(), { code: 'BODY_TOO_LARGE', message: 'the body is over 500 KB' });
  });

  it('a call accepted whatever the Content-Type still answers 200', async () => {
    for (const contentType of ['application/json', 'text/plain', 'nonsense']) {
      const res = await app.inject(post('/v1/track', '{"userId":"u","event":"E"}', { 'content-type': contentType }));
      assert.deepEqual([res.statusCode, res.json()], [200, { success: true }], contentType);
    }
  });
});
