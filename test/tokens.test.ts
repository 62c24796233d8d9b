// Scoped admin tokens on the real stack (docs/admin-api.md, "Tokens and scopes"): made, used,
// listed (never shown again) and revoked; every route of /openapi.json tried with every scope;
// metadata tokens see no payloads in the trace, the live feed or dead letters; tokens limited to
// sources see only those; a revocation on one control instance is refused by another within 2 s;
// failed authentications are limited per address; and no token reaches a service log.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { requestJson } from './support/http.js';
import { openLiveStream } from './support/live-stream.js';
import { scrape } from './support/metrics.js';
import { startReceiver, type Receiver } from './support/receiver.js';
import { newSecret, registerSecret } from './support/secrets.js';
import { pipelineEnv, setupTopics, startService, type RunningService } from './support/services.js';
import { uniquePrefix } from './support/stack.js';

/** Reads only admin tokens may make: tokens, and notification endpoints (they cover every source; docs/decisions/0016, 0019). */
const ADMIN_READS = ['/v1/tokens', '/v1/notification-endpoints'];

type Rec = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- API bodies
type Fixture = { source: Rec; destination: Rec; audience: Rec; trait: Rec; replay: Rec; messageId: string; deadLetterId: string };

/** Words of the payloads the tests send: none may reach a metadata token. */
const PAYLOAD_MARKS = ['payload-email@example.com', 'payload-total-4711', 'payload-context-agent', 'payload-trait-plan'];

describe('scoped admin tokens', () => {
  const prefix = uniquePrefix('tokens');
  const adminToken = newSecret('tokens admin token', 'adm-');
  const base = pipelineEnv(prefix, { SWITCHYARD_ADMIN_TOKEN: adminToken, LOG_LEVEL: 'debug', SWITCHYARD_ALLOWED_CIDRS: '127.0.0.0/8', SWITCHYARD_RETRY_TIERS: '300ms', SWITCHYARD_RETRY_DEADLINE: '2s' });
  let a: RunningService; // control instance A: where tokens are made and revoked
  let b: RunningService; // control instance B: a low failure limit
  let ingest: RunningService;
  let fanout: RunningService;
  let delivery: RunningService;
  let receiver: Receiver;
  const fx: Record<'A' | 'B', Fixture> = {} as never;
  const tokens: Record<'admin' | 'read' | 'metadata' | 'readA' | 'metadataA', Rec> = {} as never;
  const all = () => [a, b, ingest, fanout, delivery].filter(Boolean);
  const api = (svc: RunningService, method: string, path: string, body?: unknown, token = adminToken) => requestJson(method, `${svc.url}${path}`, { token, body });
  const until = async <T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 30_000): Promise<T> => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const value = await probe();
      if (value !== undefined) return value;
      assert.ok(Date.now() < deadline, `${what} within ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, 100));
    }
  };
  const track = async (writeKey: string, messageId: string) => {
    const res = await fetch(`${ingest.url}/v1/track`, {
      method: 'POST', headers: { authorization: `Basic ${Buffer.from(`${writeKey}:`).toString('base64')}`, 'content-type': 'application/json' },
      body: JSON.stringify({ userId: 'tok-user', event: 'Order Completed', messageId, properties: { email: PAYLOAD_MARKS[0], total: PAYLOAD_MARKS[1] }, context: { userAgent: PAYLOAD_MARKS[2], traits: { plan: PAYLOAD_MARKS[3] } } }),
    });
    assert.equal(res.status, 200, await res.text());
  };

  before(async () => {
    // The receiver refuses for good and echoes the body: a dead letter whose excerpt carries the payload.
    receiver = await startReceiver((req) => ({ status: 400, body: `refused: ${req.text}` }));
    await setupTopics(base);
    [a, b, ingest, fanout, delivery] = await Promise.all([
      startService('control', { ...base, CONTROL_AUTH_FAILURE_LIMIT: '1000' }),
      startService('control', { ...base, CONTROL_AUTH_FAILURE_LIMIT: '5', CONTROL_AUTH_FAILURE_WINDOW: '1m' }),
      startService('ingest', base),
      startService('fanout', base),
      startService('delivery', base),
    ]);
    for (const [label, scopes, limitTo] of [['admin', ['admin']], ['read', ['read']], ['metadata', ['metadata']], ['readA', ['read'], 'A'], ['metadataA', ['metadata'], 'A']] as const) {
      tokens[label] = { scopes, limitTo };
    }
    for (const key of ['A', 'B'] as const) {
      const source = (await api(a, 'POST', '/v1/sources', { name: `Tokens ${key}` })).body;
      const destination = (await api(a, 'POST', '/v1/destinations', { sourceId: source.id, name: `Hooks ${key}`, type: 'webhooks', enabled: true, settings: { sharedSecret: null, webhooks: [{ url: receiver.url, headers: { 'X-Api-Key': newSecret(`header ${key}`) } }] } })).body;
      const audience = (await api(a, 'POST', '/v1/audiences', { sourceId: source.id, name: `Planners ${key}`, condition: { trait: 'plan', op: 'exists' } })).body;
      const trait = (await api(a, 'POST', '/v1/computed-traits', { sourceId: source.id, name: `Orders ${key}`, definition: { kind: 'event_count', event: 'Order Completed', within: '30d' } })).body;
      fx[key] = { source, destination, audience, trait, replay: {}, messageId: `tok-${key}-${Date.now()}`, deadLetterId: '' };
    }
    for (const [label, t] of Object.entries(tokens)) {
      const res = await api(a, 'POST', '/v1/tokens', { name: `test ${label}`, scopes: t.scopes, ...(t.limitTo ? { sourceIds: [fx[t.limitTo as 'A'].source.id] } : {}) });
      assert.equal(res.status, 201, res.text);
      registerSecret(res.body.token, `${label} token`);
      Object.assign(t, res.body);
    }
  });
  after(async () => {
    await Promise.all(all().map((s) => s.stop()));
    await receiver?.close();
  });

  it('create answers 201 with the token once; it works at once; list shows id, name, scopes, sourceIds, createdAt and never the token or its hash', async () => {
    const t = tokens.read;
    assert.match(t.token, /^syt_[A-Za-z0-9_-]{43}$/);
    assert.match(t.id, /^tok_/);
    assert.equal((await api(a, 'GET', '/v1/sources', undefined, t.token)).status, 200);
    const list = await api(a, 'GET', '/v1/tokens');
    assert.equal(list.status, 200);
    const listed = list.body.tokens.find((x: Rec) => x.id === t.id);
    assert.deepEqual(Object.keys(listed).sort(), ['createdAt', 'id', 'name', 'scopes', 'sourceIds']);
    assert.deepEqual(listed.scopes, ['read']);
    assert.equal(listed.sourceIds, null);
    assert.deepEqual(list.body.tokens.find((x: Rec) => x.id === tokens.readA.id).sourceIds, [fx.A.source.id]);
    for (const x of Object.values(tokens)) assert.ok(!list.text.includes(x.token), 'no token value in the list');
    assert.ok(!/[0-9a-f]{64}/.test(list.text), 'no hash in the list');
  });

  it('refuses invalid tokens requests with 400 naming the field', async () => {
    const cases: Array<[unknown, string, string]> = [
      [{ scopes: ['read'] }, 'INVALID_FIELD', 'name'],
      [{ name: 'x' }, 'INVALID_FIELD', 'scopes'],
      [{ name: 'x', scopes: [] }, 'INVALID_FIELD', 'scopes'],
      [{ name: 'x', scopes: ['read', 'write'] }, 'INVALID_FIELD', 'scopes[1]'],
      [{ name: 'x', scopes: ['admin'], sourceIds: [fx.A.source.id] }, 'INVALID_FIELD', 'sourceIds'],
      [{ name: 'x', scopes: ['read'], sourceIds: [fx.A.source.id, fx.A.source.id, 'src_nope'] }, 'UNKNOWN_SOURCE', 'sourceIds[2]'],
      [{ name: 'x', scopes: ['read'], extra: 1 }, 'UNKNOWN_FIELD', 'extra'],
    ];
    for (const [body, code, field] of cases) {
      const res = await api(a, 'POST', '/v1/tokens', body);
      assert.equal(res.status, 400, `${JSON.stringify(body)}: ${res.text}`);
      assert.deepEqual({ code: res.body.code, field: res.body.field }, { code, field }, JSON.stringify(body));
    }
    assert.equal((await api(a, 'DELETE', '/v1/tokens/tok_nope')).status, 404);
  });

  it('a revocation with Content-Type: application/json and no body (as some clients send it) is accepted: 204, then 404 TOKEN_NOT_FOUND', async () => {
    const made = await api(a, 'POST', '/v1/tokens', { name: 'json-revoke', scopes: ['read'] });
    assert.equal(made.status, 201);
    const revoke = () => requestJson('DELETE', `${a.url}/v1/tokens/${made.body.id}`, { token: adminToken, headers: { 'content-type': 'application/json' } });
    const first = await revoke();
    assert.equal(first.status, 204, first.text);
    const again = await revoke();
    assert.deepEqual([again.status, again.body.code, typeof again.body.message], [404, 'TOKEN_NOT_FOUND', 'string'], again.text);
  });

  describe('with events through the pipeline', () => {
    before(async () => {
      await new Promise((r) => setTimeout(r, 1500)); // the destinations reach fan-out and delivery
      const streams = await Promise.all([tokens.read, tokens.metadata].map((t) => openLiveStream(a.url, fx.A.source.id, t.token)));
      try {
        await Promise.all(streams.map((s) => s.waitFor((e) => e.event === 'ready')));
        for (const key of ['A', 'B'] as const) await track(fx[key].source.writeKeys[0], fx[key].messageId);
        const [read, metadata] = await Promise.all(streams.map((s) => s.waitFor((e) => e.event === 'call' && e.id === fx.A.messageId)));
        liveCalls.read = JSON.parse(read!.data);
        liveCalls.metadata = JSON.parse(metadata!.data);
      } finally {
        for (const s of streams) s.close();
      }
      for (const key of ['A', 'B'] as const) {
        fx[key].deadLetterId = await until(`the dead letter of ${key}`, async () => (await api(a, 'GET', `/v1/dead-letters?destinationId=${fx[key].destination.id}`)).body.deadLetters.find((d: Rec) => d.messageId === fx[key].messageId)?.id);
        await until(`the trace of ${key}`, async () => ((await api(a, 'GET', `/v1/messages/${fx[key].messageId}`)).body?.destinations?.[0]?.state === 'dead_lettered' ? true : undefined));
        const now = Date.now();
        const replay = await api(a, 'POST', `/v1/destinations/${fx[key].destination.id}/replays`, { from: new Date(now - 60_000).toISOString(), to: new Date(now - 30_000).toISOString() });
        assert.equal(replay.status, 202, replay.text);
        fx[key].replay = replay.body;
      }
      const endpoint = await api(a, 'POST', '/v1/notification-endpoints', { url: 'https://hooks.example.com/notify', eventTypes: ['destination.disabled'] });
      assert.equal(endpoint.status, 201, endpoint.text);
      notificationEndpointId = endpoint.body.id;
    });
    let notificationEndpointId = '';
    const liveCalls: Record<'read' | 'metadata', Rec> = {} as never;

    /** The route with its path parameters filled for source `key` (reads), or with ids that exist nowhere (writes: nothing changes). */
    const fill = (path: string, method: string, key: 'A' | 'B') => {
      const f = fx[key];
      if (method !== 'get') return path.replace(/\{[^}]+\}/g, 'nope');
      const id = path.startsWith('/v1/sources') ? f.source.id : path.startsWith('/v1/destinations') ? f.destination.id : path.startsWith('/v1/dead-letters') ? f.deadLetterId
        : path.startsWith('/v1/audiences') ? f.audience.id : path.startsWith('/v1/computed-traits') ? f.trait.id
        : path.startsWith('/v1/notification-endpoints') ? notificationEndpointId : 'nope';
      return path.replace('{id}', encodeURIComponent(id)).replace('{rid}', f.replay.id).replace('{messageId}', f.messageId);
    };
    /** One request; an event stream answers with its status and is closed at once. */
    const probe = async (method: string, path: string, token: string) => {
      const abort = new AbortController();
      const body = ['post', 'put', 'patch'].includes(method) ? '{}' : undefined;
      const res = await fetch(`${a.url}${path}`, { method: method.toUpperCase(), signal: abort.signal, body, headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) } });
      const streaming = (res.headers.get('content-type') ?? '').startsWith('text/event-stream');
      const text = streaming ? '' : await res.text();
      abort.abort();
      return { status: res.status, text, json: text ? JSON.parse(text) as Rec : undefined };
    };

    it('every route of /openapi.json, with every scope: reads for all (tokens and notification endpoints for admin only), every write for admin only (403 MISSING_SCOPE naming admin)', async () => {
      const doc = (await (await fetch(`${a.url}/openapi.json`)).json()) as { paths: Record<string, Record<string, Rec>> };
      const routes = Object.entries(doc.paths).flatMap(([path, ops]) => Object.keys(ops).filter((m) => ['get', 'post', 'put', 'patch', 'delete'].includes(m)).map((m) => [m, path] as const));
      assert.ok(routes.length >= 30, `${routes.length} routes`);
      let checked = 0;
      for (const [method, path] of routes) {
        const needed = method === 'get' && !ADMIN_READS.some((r) => path.startsWith(r)) ? 'metadata' : 'admin';
        assert.deepEqual(doc.paths[path]![method]!.security, [{ bearer: [needed] }], `${method} ${path}: the document names the scope the API enforces`);
        for (const [label, secret] of [['admin', tokens.admin.token], ['env admin', adminToken], ['read', tokens.read.token], ['metadata', tokens.metadata.token]] as const) {
          const res = await probe(method, fill(path, method, 'A'), secret);
          const where = `${label} ${method.toUpperCase()} ${path}: ${res.status} ${res.text.slice(0, 200)}`;
          const allowed = label.includes('admin') || needed === 'metadata';
          if (!allowed) {
            assert.equal(res.status, 403, where);
            assert.deepEqual([res.json!.code, res.json!.scope], ['MISSING_SCOPE', 'admin'], where);
          } else if (method === 'get') {
            assert.equal(res.status, 200, where);
          } else {
            assert.ok([400, 404].includes(res.status), `${where} (allowed: the body or id is refused, nothing changes)`);
          }
          checked++;
        }
      }
      console.log(`# scope checks: ${checked} (${routes.length} routes × 4 tokens)`);
    });

    it('a metadata token sees no payload in the message trace, the live feed or dead letters; a read token sees them', async () => {
      const seen = (text: string) => PAYLOAD_MARKS.filter((m) => text.includes(m));
      // Live feed: the same call, read by both streams.
      assert.equal(liveCalls.read.call.properties.email, PAYLOAD_MARKS[0]);
      assert.deepEqual(seen(JSON.stringify(liveCalls.metadata)), []);
      assert.equal(liveCalls.metadata.call.event, 'Order Completed');
      assert.equal(liveCalls.metadata.call.userId, 'tok-user');
      for (const field of ['properties', 'context', 'traits', 'integrations']) assert.ok(!(field in liveCalls.metadata.call), field);
      // Dead letters: listed and one by one.
      const readLetter = await api(a, 'GET', `/v1/dead-letters/${fx.A.deadLetterId}`, undefined, tokens.read.token);
      assert.ok(seen(readLetter.body.body).length > 0 && seen(readLetter.body.responseExcerpt).length > 0, 'the read token sees the body and the echoed excerpt');
      for (const path of [`/v1/dead-letters/${fx.A.deadLetterId}`, '/v1/dead-letters', `/v1/dead-letters?destinationId=${fx.A.destination.id}`]) {
        const res = await api(a, 'GET', path, undefined, tokens.metadata.token);
        assert.equal(res.status, 200, path);
        assert.deepEqual(seen(res.text), [], `${path}: ${res.text.slice(0, 300)}`);
      }
      const letter = (await api(a, 'GET', `/v1/dead-letters/${fx.A.deadLetterId}`, undefined, tokens.metadata.token)).body;
      assert.deepEqual([letter.body, letter.responseExcerpt, letter.status, letter.messageId], [null, null, 400, fx.A.messageId]);
      // The trace carries no payload for anyone; the metadata token sees it whole.
      const trace = await api(a, 'GET', `/v1/messages/${fx.A.messageId}`, undefined, tokens.metadata.token);
      assert.equal(trace.status, 200);
      assert.deepEqual(seen(trace.text), []);
      assert.deepEqual(trace.body, (await api(a, 'GET', `/v1/messages/${fx.A.messageId}`)).body);
      // Credentials: admin tokens only.
      for (const t of [tokens.read, tokens.metadata]) {
        assert.deepEqual((await api(a, 'GET', `/v1/sources/${fx.A.source.id}`, undefined, t.token)).body.writeKeys, ['********']);
        assert.deepEqual((await api(a, 'GET', `/v1/destinations/${fx.A.destination.id}`, undefined, t.token)).body.settings.webhooks[0].headers, { 'X-Api-Key': '********' });
      }
      assert.deepEqual((await api(a, 'GET', `/v1/sources/${fx.A.source.id}`, undefined, tokens.admin.token)).body.writeKeys, fx.A.source.writeKeys);
    });

    it('a token limited to a source sees only its resources: lists filtered, every read route of another source 403 SOURCE_NOT_ALLOWED', async () => {
      const doc = (await (await fetch(`${a.url}/openapi.json`)).json()) as { paths: Record<string, Record<string, Rec>> };
      const reads = Object.entries(doc.paths).filter(([path, ops]) => ops.get && !ADMIN_READS.some((r) => path.startsWith(r))).map(([path]) => path);
      for (const label of ['readA', 'metadataA'] as const) {
        for (const path of reads.filter((p) => p.includes('{'))) {
          const own = await probe('get', fill(path, 'get', 'A'), tokens[label].token);
          assert.equal(own.status, 200, `${label} ${path} of its source: ${own.text.slice(0, 200)}`);
          const other = await probe('get', fill(path, 'get', 'B'), tokens[label].token);
          assert.equal(other.status, 403, `${label} ${path} of another source: ${other.text.slice(0, 200)}`);
          assert.equal(other.json!.code, 'SOURCE_NOT_ALLOWED');
        }
        const lists: Array<[string, string, (x: Rec) => string]> = [
          ['/v1/sources', 'sources', (x) => x.id], ['/v1/destinations', 'destinations', (x) => x.sourceId], ['/v1/dead-letters', 'deadLetters', (x) => x.sourceId],
          ['/v1/audiences', 'audiences', (x) => x.sourceId], ['/v1/computed-traits', 'computedTraits', (x) => x.sourceId],
        ];
        for (const [path, key, sourceOf] of lists) {
          const res = await api(a, 'GET', path, undefined, tokens[label].token);
          assert.equal(res.status, 200, path);
          assert.ok(res.body[key].length > 0, `${label} ${path} lists its own`);
          assert.deepEqual([...new Set(res.body[key].map(sourceOf))], [fx.A.source.id], `${label} ${path}`);
        }
        for (const path of [`/v1/destinations?sourceId=${fx.B.source.id}`, `/v1/audiences?sourceId=${fx.B.source.id}`, `/v1/computed-traits?sourceId=${fx.B.source.id}`, `/v1/dead-letters?destinationId=${fx.B.destination.id}`]) {
          const res = await api(a, 'GET', path, undefined, tokens[label].token);
          assert.deepEqual([res.status, res.body.code], [403, 'SOURCE_NOT_ALLOWED'], path);
        }
        const live = await openLiveStream(a.url, fx.B.source.id, tokens[label].token);
        live.close();
        assert.equal(live.status, 403);
      }
    });
  });

  it('a token revoked on one control instance is refused by the other within 2 s, and its open live stream there ends', async () => {
    const made = await api(a, 'POST', '/v1/tokens', { name: 'short-lived', scopes: ['read'] });
    assert.equal(made.status, 201);
    const secret: string = made.body.token;
    await new Promise((r) => setTimeout(r, 1000)); // B reads it (no 401s to count against the failure limit)
    assert.equal((await api(b, 'GET', '/v1/sources', undefined, secret)).status, 200, 'B knows the token');
    const stream = await openLiveStream(b.url, fx.A.source.id, secret);
    await stream.waitFor((e) => e.event === 'ready');
    const revoked = await api(a, 'DELETE', `/v1/tokens/${made.body.id}`);
    assert.equal(revoked.status, 204);
    const t0 = Date.now();
    assert.equal((await api(a, 'GET', '/v1/sources', undefined, secret)).status, 401, 'A refuses it at once');
    let status = 200;
    while (status === 200) {
      status = (await api(b, 'GET', '/v1/sources', undefined, secret)).status;
      if (status === 200) await new Promise((r) => setTimeout(r, 25));
    }
    const ms = Date.now() - t0;
    assert.equal(status, 401);
    assert.ok(ms < 2000, `refused by B ${ms} ms after the revocation`);
    const end = await stream.waitFor((e) => e.event === 'end', Math.max(1, 2000 - (Date.now() - t0)));
    assert.deepEqual(JSON.parse(end.data), { reason: 'revoked' });
    stream.close();
    assert.ok(!(await api(a, 'GET', '/v1/tokens')).body.tokens.some((x: Rec) => x.id === made.body.id), 'no longer listed');
    console.log(`# revocation: refused by the other instance after ${ms} ms`);
  });

  it('failed authentications are limited per address (429 + Retry-After past CONTROL_AUTH_FAILURE_LIMIT); a valid token never is', async () => {
    const statuses: number[] = [];
    let retryAfter = '';
    for (let i = 0; i < 7; i++) {
      const res = await fetch(`${b.url}/v1/sources`, { headers: { authorization: `Bearer wrong-token-${i}` } });
      statuses.push(res.status);
      if (res.status === 429) {
        retryAfter = res.headers.get('retry-after') ?? '';
        assert.equal(((await res.json()) as Rec).code, 'TOO_MANY_AUTH_FAILURES');
      } else {
        await res.text();
      }
    }
    const first = statuses.indexOf(429);
    assert.ok(first > 0 && first <= 5, `429 after at most 5 failures (this instance saw one before): ${statuses.join(',')}`);
    assert.ok(statuses.slice(first).every((s) => s === 429) && statuses.slice(0, first).every((s) => s === 401), statuses.join(','));
    assert.ok(Number(retryAfter) >= 1 && Number(retryAfter) <= 60, `Retry-After ${retryAfter}`);
    // The right tokens from the same address, while it is limited.
    assert.equal((await api(b, 'GET', '/v1/sources')).status, 200);
    assert.equal((await api(b, 'GET', '/v1/sources', undefined, tokens.metadata.token)).status, 200);
    assert.equal((await fetch(`${b.url}/v1/sources`)).status, 429, 'a missing token is a failure too');
    const metric = await scrape(b.url);
    assert.ok(metric('control_admin_auth_failures_total', { reason: 'rate_limited' }) >= 3);
    assert.ok((await scrape(a.url))('control_admin_forbidden_total', { scope: 'admin' }) > 0);
  });

  it('no token reaches any service log, even at debug level', async () => {
    await new Promise((r) => setTimeout(r, 300));
    const secrets = [['admin token', adminToken], ...Object.entries(tokens).map(([label, t]) => [`${label} token`, t.token as string])];
    const leaks: string[] = [];
    let lines = 0;
    for (const svc of all()) {
      for (const [i, line] of svc.proc.output.entries()) {
        lines++;
        for (const [label, value] of secrets) if (line.includes(value!)) leaks.push(`${svc.proc.name} line ${i + 1}: ${label}`);
      }
    }
    assert.ok(lines > 0);
    assert.deepEqual(leaks, []);
    console.log(`# log scan: ${lines} lines, ${secrets.length} tokens, no leak`);
  });
});
