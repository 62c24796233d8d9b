// The ingest service against the real broker and registry: every path and auth form of the tracking
// API, every rule of docs/decisions/0002-tracking-api-limits-and-rejections.md (status, body, and
// what was or was not written), enrichment, and the process's own protection against hostile
// bodies.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { request } from 'node:http';
import { gzipSync } from 'node:zlib';
import { after, before, describe, it } from 'node:test';
import { topicNames } from '@switchyard/platform/kafka/topics';
import { makeSource, writeConfig } from './support/config.js';
import { pipelineEnv, setupTopics, startService, type RunningService } from './support/services.js';
import { uniquePrefix } from './support/stack.js';
import { TopicReader } from './support/topic-reader.js';

/**
 * POST with node:http. The server answers as soon as the body passes the limit and then closes the
 * connection without reading the rest, so the client either reads the 400 or, if its next write
 * loses the race, sees the connection reset (status 0): both mean the body was refused.
 */
function rawPost(url: string, body: Buffer, headers: Record<string, string>, chunked: boolean): Promise<{ status: number; body: Rec }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'POST', headers: chunked ? headers : { ...headers, 'content-length': String(body.length) } }, (res) => {
      let text = '';
      res.on('data', (d) => { text += d; });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) }));
    });
    req.on('error', (err: NodeJS.ErrnoException) => (err.code === 'EPIPE' || err.code === 'ECONNRESET' ? resolve({ status: 0, body: { code: 'BODY_TOO_LARGE' } }) : reject(err)));
    if (chunked) { for (let i = 0; i < body.length; i += 64 * 1024) req.write(body.subarray(i, i + 64 * 1024)); req.end(); } else req.end(body);
  });
}

type Rec = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- decoded records of several shapes

describe('ingest: the tracking API into the ingest topic', () => {
  const prefix = uniquePrefix('ingest');
  const topics = topicNames(prefix);
  const source = makeSource({ name: 'Ingest test' });
  const disabled = makeSource({ enabled: false });
  const key = source.writeKeys[0]!;
  const basic = (user: string) => `Basic ${Buffer.from(user).toString('base64')}`;
  let ingest: RunningService;
  let reader: TopicReader;

  const post = async (path: string, body: unknown, headers: Record<string, string> = { authorization: basic(`${key}:`) }) => {
    const res = await fetch(`${ingest.url}${path}`, { method: 'POST', headers, body: typeof body === 'string' || Buffer.isBuffer(body) ? body : JSON.stringify(body) });
    const text = await res.text();
    return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : undefined };
  };
  const ingested = (userId: string, count = 1) => reader.waitFor<Rec>(topics.ingest, (v) => v.userId === userId || v.anonymousId === userId, count);
  /**
   * Proves a refused request wrote nothing: a valid call with the same user (same key, same
   * partition, so it lands after anything the refused one wrote) arrives, and nothing else did.
   */
  const assertNothingWrittenFor = async (userId: string) => {
    const sentinel = randomUUID();
    assert.equal((await post('/v1/track', { userId, event: 'Sentinel', messageId: sentinel })).status, 200);
    await reader.waitFor<Rec>(topics.ingest, (v) => v.messageId === sentinel);
    assert.deepEqual(reader.values<Rec>(topics.ingest, (v) => v.userId === userId).map((v) => v.messageId), [sentinel]);
    assert.deepEqual(reader.values<Rec>(topics.invalidEvents, (v) => String(v.payload).includes(userId)), []);
  };

  before(async () => {
    const env = pipelineEnv(prefix, { INGEST_PUBLIC_URL: 'https://track.example.com/sy/' });
    await setupTopics(env);
    await writeConfig(prefix, { sources: [source, disabled] });
    ingest = await startService('ingest', env);
    reader = await new TopicReader([topics.ingest, topics.invalidEvents]).start();
  });
  after(async () => {
    await reader?.stop();
    await ingest?.stop();
  });

  it('a batch of all six types: 200 only after Kafka has them, fields, key, merged context and integrations', async () => {
    const run = randomUUID();
    const user = `u-${run}`;
    const now = Date.now();
    const batch = [
      { type: 'identify', userId: user, traits: { email: 'ada@example.com', name: 'Ada Lovelace', 'ünï': '日本' }, messageId: `${run}-1` },
      { type: 'track', userId: user, event: 'Order Completed', properties: { revenue: 9.99 }, integrations: { Webhooks: false }, messageId: `${run}-2` },
      { type: 'page', userId: user, name: 'Pricing', category: 'Docs', properties: { path: '/pricing', url: 'https://x.test/pricing', title: 'Pricing', referrer: '' }, messageId: `${run}-3` },
      { type: 'screen', anonymousId: `a-${run}`, name: 'Home', category: 'Feed', properties: { tab: 'feed' }, context: { device: { model: 'Pixel', type: 'android' } }, messageId: `${run}-4` },
      { type: 'group', userId: user, groupId: 'g-1', traits: { plan: 'pro' }, messageId: `${run}-5` },
      { type: 'alias', userId: user, previousId: `a-${run}`, messageId: `${run}-6` },
    ];
    const res = await post('/v1/batch', { batch, context: { library: { name: 'test', version: '1' } }, integrations: { All: true }, sentAt: new Date(now).toISOString() });
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, { success: true });

    const byId = new Map((await reader.waitFor<Rec>(topics.ingest, (v) => String(v.messageId).startsWith(run), 6)).map((v) => [v.messageId, v]));
    const identify = byId.get(`${run}-1`)!;
    assert.equal(identify.sourceId, source.id);
    assert.deepEqual(JSON.parse(identify.traits), batch[0]!.traits);
    assert.deepEqual(JSON.parse(identify.context), { library: { name: 'test', version: '1' }, ip: '127.0.0.1' });
    assert.deepEqual(JSON.parse(identify.integrations), { All: true });
    const track = byId.get(`${run}-2`)!;
    assert.equal(track.event, 'Order Completed');
    assert.deepEqual(JSON.parse(track.properties), { revenue: 9.99 });
    assert.deepEqual(JSON.parse(track.integrations), { All: true, Webhooks: false }, "the event's own integrations win");
    const page = byId.get(`${run}-3`)!;
    assert.deepEqual([page.name, page.category, JSON.parse(page.properties).path], ['Pricing', 'Docs', '/pricing']);
    const screen = byId.get(`${run}-4`)!;
    assert.deepEqual([screen.userId, screen.anonymousId, screen.name, screen.category, JSON.parse(screen.properties)], [null, `a-${run}`, 'Home', 'Feed', { tab: 'feed' }]);
    assert.deepEqual(JSON.parse(screen.context).device, { model: 'Pixel', type: 'android' });
    assert.equal(byId.get(`${run}-5`)!.groupId, 'g-1');
    assert.equal(byId.get(`${run}-6`)!.previousId, `a-${run}`);

    const records = reader.records.filter((r) => r.topic === topics.ingest && String((r.decoded?.value as Rec | undefined)?.messageId).startsWith(run));
    assert.deepEqual(new Set(records.map((r) => r.decoded!.name)), new Set(['io.switchyard.event.Identify', 'io.switchyard.event.Track', 'io.switchyard.event.Page', 'io.switchyard.event.Screen', 'io.switchyard.event.Group', 'io.switchyard.event.Alias']));
    assert.ok(records.filter((r) => r.decoded!.name !== 'io.switchyard.event.Screen').every((r) => r.key === `${source.id}:${user}`));
    assert.equal(records.find((r) => r.decoded!.name === 'io.switchyard.event.Screen')!.key, `${source.id}:a-${run}`);
    for (const v of byId.values()) {
      assert.ok(v.receivedAt >= now - 1000 && v.receivedAt <= Date.now());
      assert.equal(v.timestamp, v.receivedAt, 'no client timestamp: timestamp = receivedAt');
    }
  });

  it('timestamps: client clock skew corrected, original kept, historical import kept, lenient formats', async () => {
    const user = `ts-${randomUUID()}`;
    // The client's clock runs one hour fast; the call happened 5 s before it was sent.
    const skew = 3_600_000;
    const clientNow = Date.now() + skew;
    const res = await post('/v1/batch', {
      sentAt: new Date(clientNow).toISOString(),
      batch: [
        { type: 'track', userId: user, event: 'Skewed', timestamp: new Date(clientNow - 5000).toISOString() },
        { type: 'track', userId: user, event: 'Plus0000', timestamp: '2016-04-26T18:14:48+0000' },
        { type: 'track', userId: user, event: 'Nanos', timestamp: '2020-01-02T03:04:05.678901234Z' },
      ],
    });
    assert.equal(res.status, 200);
    const [skewed, plus, nanos] = ['Skewed', 'Plus0000', 'Nanos'].map((e) => reader.values<Rec>(topics.ingest, (v) => v.userId === user && v.event === e)[0]);
    await ingested(user, 3);
    const get = (e: string) => reader.values<Rec>(topics.ingest, (v) => v.userId === user && v.event === e)[0]!;
    void skewed; void plus; void nanos;
    const s = get('Skewed');
    assert.equal(s.originalTimestamp, clientNow - 5000);
    assert.equal(s.sentAt, clientNow);
    assert.equal(s.timestamp, s.receivedAt - 5000);
    const p = get('Plus0000');
    assert.equal(p.originalTimestamp, Date.parse('2016-04-26T18:14:48Z'));
    assert.equal(p.timestamp, s.receivedAt - (clientNow - Date.parse('2016-04-26T18:14:48Z')), 'historical, shifted by the same skew');
    assert.equal(get('Nanos').originalTimestamp, Date.parse('2020-01-02T03:04:05.678Z'));
  });

  it('write key forms: Basic with and without the colon, writeKey in the body; any Content-Type; gzip; chunked', async () => {
    const user = `auth-${randomUUID()}`;
    const call = (n: number) => ({ batch: [{ type: 'track', userId: user, event: `E${n}` }] });
    assert.equal((await post('/v1/batch', call(1), { authorization: basic(`${key}:`) })).status, 200);
    assert.equal((await post('/v1/batch', call(2), { authorization: basic(key) })).status, 200);
    assert.equal((await post('/v1/batch', { ...call(3), writeKey: key }, { 'content-type': 'text/plain' })).status, 200);
    assert.equal((await post('/v1/batch', { ...call(4), writeKey: key }, {})).status, 200);
    assert.equal((await post('/v1/batch', gzipSync(JSON.stringify(call(5))), { authorization: basic(`${key}:`), 'content-encoding': 'gzip', 'content-type': 'application/json' })).status, 200);
    const chunks = [JSON.stringify(call(6)).slice(0, 10), JSON.stringify(call(6)).slice(10)];
    const chunked = await fetch(`${ingest.url}/v1/batch`, {
      method: 'POST', headers: { authorization: basic(`${key}:`) }, duplex: 'half',
      body: new ReadableStream({ pull(c) { const next = chunks.shift(); if (next) c.enqueue(new TextEncoder().encode(next)); else c.close(); } }),
    } as RequestInit);
    assert.equal(chunked.status, 200);
    assert.equal((await ingested(user, 6)).length, 6);
  });

  it('single-call paths, short browser paths and trailing slashes: the type comes from the path', async () => {
    const user = `paths-${randomUUID()}`;
    const paths: Array<[string, string, Rec]> = [
      ['/v1/identify', 'io.switchyard.event.Identify', {}], ['/v1/i/', 'io.switchyard.event.Identify', {}],
      ['/v1/track', 'io.switchyard.event.Track', { event: 'T' }], ['/v1/t', 'io.switchyard.event.Track', { event: 'T' }],
      ['/v1/page/', 'io.switchyard.event.Page', {}], ['/v1/p', 'io.switchyard.event.Page', {}],
      ['/v1/screen', 'io.switchyard.event.Screen', {}], ['/v1/s', 'io.switchyard.event.Screen', {}],
      ['/v1/group', 'io.switchyard.event.Group', { groupId: 'g' }], ['/v1/g', 'io.switchyard.event.Group', { groupId: 'g' }],
      ['/v1/alias', 'io.switchyard.event.Alias', { previousId: 'p' }], ['/v1/a', 'io.switchyard.event.Alias', { previousId: 'p' }],
    ];
    for (const [path, , extra] of paths) {
      const res = await post(path, { type: 'bogus', userId: user, messageId: `${user}${path}`, ...extra });
      assert.equal(res.status, 200, `${path}: ${JSON.stringify(res.body)}`);
    }
    for (const path of ['/v1/import', '/v1/import/', '/v1/b', '/v1/batch/']) {
      assert.equal((await post(path, { batch: [{ type: 'track', userId: user, event: 'B', messageId: `${user}${path}` }] })).status, 200, path);
    }
    await ingested(user, paths.length + 4);
    for (const [path, schema] of paths) {
      const rec = reader.records.find((r) => (r.decoded?.value as Rec | undefined)?.messageId === `${user}${path}`);
      assert.equal(rec?.decoded?.name, schema, path);
    }
  });

  describe('request-level refusals: 400/401 {code, message}, nothing written', () => {
    const cases: Array<[string, () => Promise<{ status: number; body: Rec }>, number, string]> = [];
    const user = `refused-${randomUUID()}`;
    const ev = { type: 'track', userId: user, event: 'Nope' };
    cases.push(['malformed JSON', () => post('/v1/batch', `{"batch":[${JSON.stringify(ev)}`), 400, 'INVALID_JSON']);
    cases.push(['a body that is not an object', () => post('/v1/batch', JSON.stringify([ev])), 400, 'INVALID_BODY']);
    cases.push(['batch is not a list', () => post('/v1/batch', { batch: ev }), 400, 'INVALID_BATCH']);
    cases.push(['over 500 KB', () => post('/v1/batch', { batch: [ev], pad: 'x'.repeat(520 * 1024) }), 400, 'BODY_TOO_LARGE']);
    cases.push(['over 500 KB once decompressed', () => post('/v1/batch', gzipSync(JSON.stringify({ batch: [ev], pad: 'x'.repeat(520 * 1024) })), { authorization: basic(`${key}:`), 'content-encoding': 'gzip' }), 400, 'BODY_TOO_LARGE']);
    cases.push(['a single call over 32 KB', () => post('/v1/track', { ...ev, properties: { pad: 'x'.repeat(33 * 1024) } }), 400, 'MESSAGE_TOO_LARGE']);
    cases.push(['no write key', () => post('/v1/batch', { batch: [ev] }, {}), 401, 'MISSING_WRITE_KEY']);
    cases.push(['an unknown write key', () => post('/v1/batch', { batch: [ev] }, { authorization: basic('not-a-key:') }), 401, 'INVALID_WRITE_KEY']);
    cases.push(['an unknown write key in the body', () => post('/v1/batch', { batch: [ev], writeKey: 'nope' }, {}), 401, 'INVALID_WRITE_KEY']);
    cases.push(['a disabled source', () => post('/v1/batch', { batch: [ev] }, { authorization: basic(`${disabled.writeKeys[0]}:`) }), 401, 'SOURCE_DISABLED']);
    cases.push(['an unknown Content-Encoding', () => post('/v1/batch', JSON.stringify({ batch: [ev] }), { authorization: basic(`${key}:`), 'content-encoding': 'zstd' }), 400, 'UNSUPPORTED_ENCODING']);
    cases.push(['gzip header on plain bytes', () => post('/v1/batch', JSON.stringify({ batch: [ev] }), { authorization: basic(`${key}:`), 'content-encoding': 'gzip' }), 400, 'INVALID_ENCODING']);
    cases.push(['nesting deeper than 64', () => post('/v1/batch', `{"batch":[{"type":"track","userId":"${user}","event":"x","properties":${'{"a":'.repeat(100)}1${'}'.repeat(100)}}]}`), 400, 'NESTING_TOO_DEEP']);
    cases.push(['single call: unknown type is impossible, missing userId', () => post('/v1/track', { event: 'x' }), 400, 'MISSING_USER_ID']);
    cases.push(['single call: track without event', () => post('/v1/track', { userId: user }), 400, 'MISSING_EVENT']);
    cases.push(['single call: group without groupId', () => post('/v1/group', { userId: user }), 400, 'MISSING_GROUP_ID']);
    cases.push(['single call: alias without previousId', () => post('/v1/alias', { userId: user }), 400, 'MISSING_PREVIOUS_ID']);
    cases.push(['single call: alias without userId', () => post('/v1/alias', { previousId: user, anonymousId: user }), 400, 'MISSING_USER_ID']);
    cases.push(['single call: bad timestamp', () => post('/v1/track', { ...ev, timestamp: 'yesterday' }), 400, 'INVALID_TIMESTAMP']);
    for (const [name, send, status, code] of cases) {
      it(`${name} → ${status} ${code}`, async () => {
        const res = await send();
        assert.equal(res.status, status, JSON.stringify(res.body));
        assert.equal(res.body.code, code);
        assert.equal(typeof res.body.message, 'string');
      });
    }
    it('none of them wrote anything', () => assertNothingWrittenFor(user));
  });

  it('a source created a moment before the request is accepted, never 401: the key is judged once the view has read past the request', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 10; i++) {
      const created = makeSource({ name: `Created just now ${i}` });
      await writeConfig(prefix, { sources: [created] });
      // Sent as soon as the write was acknowledged: the view may not have fetched it yet.
      statuses.push((await post('/v1/track', { userId: `fresh-${i}`, event: 'First' }, { authorization: basic(`${created.writeKeys[0]}:`) })).status);
    }
    assert.deepEqual(statuses, Array(10).fill(200));
    // 401 and not 503 CONFIG_BEHIND: the view showed it was current within UNKNOWN_KEY_WAIT_MS.
    assert.equal((await post('/v1/track', { userId: 'x', event: 'E' }, { authorization: basic('wk_never_created:') })).status, 401);
  });

  it('events that break a rule inside a batch are refused alone: 200, listed with index, messageId and reason, kept on invalid-events', async () => {
    const user = `mixed-${randomUUID()}`;
    const batch = [
      { type: 'track', userId: user, event: 'Good 1', messageId: `${user}-0` },
      { type: 'launch', userId: user, messageId: `${user}-1` },
      { type: 'track', event: 'No user', messageId: `${user}-2`, properties: { marker: user } },
      { type: 'track', userId: user, messageId: `${user}-3` },
      { type: 'group', userId: user, messageId: `${user}-4` },
      { type: 'alias', userId: user, messageId: `${user}-5` },
      { type: 'alias', previousId: user, anonymousId: user, messageId: `${user}-6` },
      { type: 'track', userId: user, event: 'Big', messageId: `${user}-7`, properties: { pad: 'x'.repeat(33 * 1024) } },
      'not an object',
      { type: 'identify', userId: user, messageId: `${user}-9` },
    ];
    const res = await post('/v1/batch', { batch });
    assert.equal(res.status, 200);
    assert.equal(res.body.success, true);
    const expected = [
      [1, 'unknown_type'], [2, 'missing_user_id'], [3, 'missing_event'], [4, 'missing_group_id'],
      [5, 'missing_previous_id'], [6, 'missing_user_id'], [7, 'message_too_large'], [8, 'not_an_object'],
    ];
    assert.deepEqual(res.body.rejected.map((r: Rec) => [r.index, r.reason]), expected);
    assert.deepEqual(res.body.rejected.map((r: Rec) => r.messageId), [`${user}-1`, `${user}-2`, `${user}-3`, `${user}-4`, `${user}-5`, `${user}-6`, `${user}-7`, null]);
    assert.ok(res.body.rejected.every((r: Rec) => typeof r.message === 'string' && r.message.length > 0));

    const good = await ingested(user, 2);
    assert.deepEqual(good.map((v) => v.messageId).sort(), [`${user}-0`, `${user}-9`]);
    const invalid = await reader.waitFor<Rec>(topics.invalidEvents, (v) => v.sourceId === source.id && (String(v.messageId).startsWith(user) || v.payload.toString() === '"not an object"'), 8);
    assert.deepEqual(invalid.map((v) => [v.batchIndex, v.reason]).sort((a, b) => Number(a[0]) - Number(b[0])), expected);
    const noUser = invalid.find((v) => v.batchIndex === 2)!;
    assert.equal(noUser.stage, 'ingest');
    assert.deepEqual(JSON.parse(noUser.payload.toString()), batch[2]);
  });

  it('hostile bodies: a gzip bomb and a 10 MB body are refused and the process stays small', async () => {
    const rss = async () => Number(/process_resident_memory_bytes\{[^}]*\} (\d+)/.exec(await (await fetch(`${ingest.url}/metrics`)).text())![1]);
    const before = await rss();
    const bomb = gzipSync(Buffer.alloc(50 * 1024 * 1024, 0x20)); // 50 MB of spaces in ~50 KB
    for (let i = 0; i < 20; i++) {
      const res = await post('/v1/batch', bomb, { authorization: basic(`${key}:`), 'content-encoding': 'gzip' });
      assert.equal(res.status, 400);
      assert.equal(res.body.code, 'BODY_TOO_LARGE');
    }
    const tenMb = Buffer.alloc(10 * 1024 * 1024, 0x61);
    for (const chunked of [false, true, false, true, false]) {
      const res = await rawPost(`${ingest.url}/v1/batch`, tenMb, { authorization: basic(`${key}:`) }, chunked);
      assert.ok(res.status === 400 || res.status === 0, `status ${res.status}`);
      assert.equal(res.body.code, 'BODY_TOO_LARGE');
    }
    const after = await rss();
    console.log(`# ingest RSS before ${(before / 1e6).toFixed(0)} MB, after bombs ${(after / 1e6).toFixed(0)} MB`);
    assert.ok(after - before < 64 * 1024 * 1024, `RSS grew by ${((after - before) / 1e6).toFixed(0)} MB`);
    assert.equal((await fetch(`${ingest.url}/healthz`)).status, 200);
  });

  it('__proto__ keys are dropped, numeric ids become strings, CORS answers browsers', async () => {
    const user = `proto-${randomUUID()}`;
    const res = await post('/v1/batch', `{"batch":[{"type":"identify","userId":"${user}","traits":{"__proto__":{"admin":true},"ok":1}},{"type":"track","userId":12345,"event":"Num","messageId":"${user}-num"}]}`);
    assert.equal(res.status, 200);
    const [identify] = await ingested(user);
    assert.deepEqual(JSON.parse(identify!.traits), { ok: 1 });
    const [num] = await reader.waitFor<Rec>(topics.ingest, (v) => v.messageId === `${user}-num`);
    assert.equal(num!.userId, '12345');
    const preflight = await fetch(`${ingest.url}/v1/batch`, { method: 'OPTIONS', headers: { origin: 'https://shop.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type' } });
    assert.equal(preflight.status, 204);
    assert.equal(preflight.headers.get('access-control-allow-origin'), '*');
  });

  it('analytics.js settings: a valid key names INGEST_PUBLIC_URL as apiHost (no scheme) and protocol, loads nothing else, short cache, CORS open', async () => {
    const res = await fetch(`${ingest.url}/v1/projects/${encodeURIComponent(key)}/settings`, { headers: { origin: 'https://shop.example' } });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('cache-control'), 'public, max-age=60');
    assert.equal(res.headers.get('access-control-allow-origin'), '*');
    const settings = await res.json() as Rec;
    assert.deepEqual(settings.integrations, { 'Segment.io': { apiKey: key, apiHost: 'track.example.com/sy/v1', protocol: 'https' } });
    assert.deepEqual(settings.remotePlugins, []);
    assert.equal(settings.metrics.sampleRate, 0);
    for (const [writeKey, code] of [['no-such-key', 'INVALID_WRITE_KEY'], [disabled.writeKeys[0]!, 'SOURCE_DISABLED']] as const) {
      const refused = await fetch(`${ingest.url}/v1/projects/${encodeURIComponent(writeKey)}/settings`, { headers: { origin: 'https://shop.example' } });
      assert.equal(refused.status, 404, code);
      assert.equal(refused.headers.get('cache-control'), 'no-store', code);
      assert.equal(refused.headers.get('access-control-allow-origin'), '*', code);
      assert.deepEqual(Object.keys(await refused.json() as Rec).sort(), ['code', 'message']);
    }
    const text = await (await fetch(`${ingest.url}/metrics`)).text();
    assert.match(text, /ingest_http_requests_total\{route="settings",status="404"/);
  });

  it('CORS preflights of what analytics.js sends (Authorization, X-Retry-Count on retries) are allowed', async () => {
    const preflight = await fetch(`${ingest.url}/v1/t`, { method: 'OPTIONS', headers: { origin: 'https://shop.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization,content-type,x-retry-count' } });
    assert.equal(preflight.status, 204);
    assert.equal(preflight.headers.get('access-control-allow-origin'), '*');
    assert.match(preflight.headers.get('access-control-allow-methods') ?? '', /POST/);
    const allowed = (preflight.headers.get('access-control-allow-headers') ?? '').toLowerCase().split(/\s*,\s*/);
    for (const h of ['authorization', 'content-type', 'x-retry-count']) assert.ok(allowed.includes(h), `${h} in ${allowed.join(',')}`);
  });

  it('serves the OpenAPI document kept in the repository', async () => {
    const served = await (await fetch(`${ingest.url}/openapi.json`)).json();
    assert.deepEqual(served, JSON.parse(readFileSync(new URL('../services/ingest/openapi.json', import.meta.url), 'utf8')), 'run npm run gen:openapi');
  });

  it('metrics on the hop: requests by route and status, events accepted and rejected, Kafka ack latency', async () => {
    const text = await (await fetch(`${ingest.url}/metrics`)).text();
    assert.match(text, /ingest_http_requests_total\{route="batch",status="200"/);
    assert.match(text, /ingest_http_requests_total\{route="batch",status="401"/);
    assert.match(text, /ingest_events_accepted_total\{type="track"/);
    assert.match(text, /ingest_events_rejected_total\{type="track",reason="missing_event"/);
    assert.match(text, /ingest_kafka_ack_seconds_count\{[^}]*\} [1-9]/);
    assert.match(text, /ingest_received_bytes_total\{[^}]*\} [1-9]/);
    assert.match(text, /ingest_http_in_flight_requests/);
  });
});
