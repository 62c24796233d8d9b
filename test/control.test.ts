// The control service against the real broker: the admin API, its validation, and the config
// view another process keeps of the config topic.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { AvroCodec } from '@switchyard/platform/codec/avro-codec';
import { ConfigView } from '@switchyard/platform/config-view/config-view';
import { topicNames } from '@switchyard/platform/kafka/topics';
import { createLogger } from '@switchyard/platform/logger';
import { requestJson } from './support/http.js';
import { registerSecretsIn } from './support/secrets.js';
import { PipelineWriter, task } from './support/pipeline-writer.js';
import { pipelineEnv, setupTopics, startService, type RunningService } from './support/services.js';
import { testKafka, testStack, uniquePrefix } from './support/stack.js';
import { scrape } from './support/metrics.js';

const token = `admin-${randomUUID()}`;
const secret = `s3cr3t-${randomUUID()}`;

async function openView(prefix: string): Promise<ConfigView> {
  const view = new ConfigView({
    kafka: testKafka('view'), codec: new AvroCodec({ registryUrl: testStack().registryUrl }),
    topic: topicNames(prefix).config, logger: createLogger({ service: 'test-view', level: 'error' }), owner: 'test',
  });
  await view.start();
  return view;
}

/** Time until the other process's view satisfies the predicate; fails past 2 s. */
async function seenWithin2s(view: ConfigView, predicate: Parameters<ConfigView['waitFor']>[0]): Promise<number> {
  const t0 = Date.now();
  await view.waitFor(predicate, 2000);
  return Date.now() - t0;
}

describe('control service: admin API and live configuration', () => {
  const prefix = uniquePrefix('control');
  const seedPath = join(tmpdir(), `seed-${randomUUID()}.yaml`);
  const env = pipelineEnv(prefix, { SWITCHYARD_ADMIN_TOKEN: token, SWITCHYARD_ALLOWED_CIDRS: '', SWITCHYARD_SEED_FILE: seedPath, SEED_SECRET: secret });
  let control: RunningService;
  let view: ConfigView;
  const responses: string[] = [];
  const api = async (method: string, path: string, body?: unknown, auth = token) => {
    const res = await requestJson(method, `${control.url}${path}`, { token: auth, body });
    responses.push(res.text);
    return res;
  };

  before(async () => {
    writeFileSync(seedPath, [
      'sources:',
      '  - id: seeded',
      '    name: Seeded source',
      '    writeKeys: ["seeded-write-key-1"]',
      'destinations:',
      '  - id: seeded-hooks',
      '    sourceId: seeded',
      '    settings:',
      '      sharedSecret: "${SEED_SECRET}"',
      '      webhooks:',
      '        - url: https://hooks.example.com/in',
      '          headers: { X-Team: growth }',
      '    signing: { standard: true }',
      '',
    ].join('\n'));
    await setupTopics(env);
    control = await startService('control', env);
    view = await openView(prefix);
  });
  after(async () => {
    await view?.stop();
    await control?.stop();
  });

  it('applies the seed file at start (secret from the environment)', async () => {
    await view.waitFor((s) => s.destination('seeded-hooks') !== undefined, 5000);
    assert.equal(view.state.sourceForWriteKey('seeded-write-key-1')?.id, 'seeded');
    assert.equal(view.state.destination('seeded-hooks')?.sharedSecret, secret);
    const { body } = await api('GET', '/v1/destinations/seeded-hooks');
    assert.equal(body.settings.sharedSecret, '********');
    assert.deepEqual(body.settings.webhooks, [{ url: 'https://hooks.example.com/in', headers: { 'X-Team': 'growth' }, clientCertificate: null }]);
    // signing from the seed: a secret is made (its value shown nowhere; a rotation gives one to copy).
    assert.equal(body.signing.standard, true);
    assert.equal(body.signing.secrets.length, 1);
    assert.equal(body.signing.newSecret, undefined);
    const seededSecret = view.state.destination('seeded-hooks')!.signingSecrets[0]!.secret;
    registerSecretsIn({ secret: seededSecret }, 'seeded signing secret');
    assert.match(seededSecret, /^whsec_/);
  });

  it('source lifecycle: create, update, add and remove write keys, delete — each seen by another process within 2 s', async () => {
    const created = await api('POST', '/v1/sources', { name: 'Website' });
    assert.equal(created.status, 201);
    const id: string = created.body.id;
    const [key1] = created.body.writeKeys as string[];
    assert.match(id, /^src_/);
    assert.equal(created.body.enabled, true);
    assert.ok(key1 && key1.length >= 40);
    const lag: number[] = [];
    lag.push(await seenWithin2s(view, (s) => s.sourceForWriteKey(key1)?.id === id));

    const list = await api('GET', '/v1/sources');
    assert.ok(list.body.sources.some((s: { id: string }) => s.id === id));
    assert.equal((await api('GET', `/v1/sources/${id}`)).body.name, 'Website');

    const patched = await api('PATCH', `/v1/sources/${id}`, { name: 'Web site', enabled: false });
    assert.equal(patched.status, 200);
    assert.equal(patched.body.enabled, false);
    lag.push(await seenWithin2s(view, (s) => s.source(id)?.enabled === false && s.source(id)?.name === 'Web site'));

    const added = await api('POST', `/v1/sources/${id}/write-keys`);
    assert.equal(added.status, 201);
    const key2: string = added.body.writeKey;
    assert.deepEqual(added.body.source.writeKeys, [key1, key2]);
    lag.push(await seenWithin2s(view, (s) => s.sourceForWriteKey(key2)?.id === id));

    const removed = await api('DELETE', `/v1/sources/${id}/write-keys/${encodeURIComponent(key1)}`);
    assert.equal(removed.status, 200);
    assert.deepEqual(removed.body.writeKeys, [key2]);
    lag.push(await seenWithin2s(view, (s) => s.sourceForWriteKey(key1) === undefined && s.sourceForWriteKey(key2)?.id === id));
    assert.equal((await api('DELETE', `/v1/sources/${id}/write-keys/not-a-key`)).status, 404);

    const dest = await api('POST', '/v1/destinations', { sourceId: id, type: 'webhooks', enabled: true, settings: { webhooks: [{ url: 'https://a.example.com/hook' }] } });
    assert.equal(dest.status, 201);
    assert.equal((await api('DELETE', `/v1/sources/${id}`)).status, 204);
    lag.push(await seenWithin2s(view, (s) => s.source(id) === undefined && s.destination(dest.body.id) === undefined && s.sourceForWriteKey(key2) === undefined));
    assert.equal((await api('GET', `/v1/sources/${id}`)).status, 404);
    assert.equal((await api('GET', `/v1/destinations/${dest.body.id}`)).status, 404, 'deleting a source deletes its destinations');
    console.log(`# config propagation to another process (ms): ${lag.join(', ')}`);
  });

  it('destination lifecycle: create, update (secret kept, replaced, removed), disable, delete', async () => {
    const src = (await api('POST', '/v1/sources', { name: 'App' })).body;
    const create = await api('POST', '/v1/destinations', {
      sourceId: src.id, name: 'Hooks', type: 'webhooks', enabled: true,
      settings: { sharedSecret: secret, webhooks: [{ url: 'https://a.example.com/hook', headers: { 'X-Api-Key': 'k1' } }, { url: 'http://b.example.com:8080/in' }] },
    });
    assert.equal(create.status, 201, create.text);
    const id: string = create.body.id;
    assert.match(id, /^dst_/);
    assert.equal(create.body.settings.sharedSecret, '********');
    assert.deepEqual(create.body.settings.webhooks[1], { url: 'http://b.example.com:8080/in', headers: {}, clientCertificate: null });
    await seenWithin2s(view, (s) => s.enabledWebhooksOf(src.id).some((d) => d.id === id && d.sharedSecret === secret));

    assert.deepEqual((await api('GET', `/v1/destinations?sourceId=${src.id}`)).body.destinations.map((d: { id: string }) => d.id), [id]);

    const renamed = await api('PATCH', `/v1/destinations/${id}`, { name: 'Renamed' });
    assert.equal(renamed.body.settings.sharedSecret, '********');
    await seenWithin2s(view, (s) => s.destination(id)?.name === 'Renamed' && s.destination(id)?.sharedSecret === secret);

    await api('PATCH', `/v1/destinations/${id}`, { settings: { sharedSecret: `${secret}-2`, webhooks: [{ url: 'https://c.example.com/' }] } });
    await seenWithin2s(view, (s) => s.destination(id)?.sharedSecret === `${secret}-2` && s.destination(id)?.webhooks.length === 1);

    const noSecret = await api('PATCH', `/v1/destinations/${id}`, { enabled: false, settings: { sharedSecret: null } });
    assert.equal(noSecret.body.settings.sharedSecret, null);
    assert.equal(noSecret.body.enabled, false);
    await seenWithin2s(view, (s) => s.destination(id)?.sharedSecret === null && s.enabledWebhooksOf(src.id).length === 0);

    assert.equal((await api('DELETE', `/v1/destinations/${id}`)).status, 204);
    await seenWithin2s(view, (s) => s.destination(id) === undefined);
    assert.equal((await api('DELETE', `/v1/destinations/${id}`)).status, 404);
  });

  describe('validation: 400 {code, message, field}', () => {
    let sourceId: string;
    before(async () => { sourceId = (await api('POST', '/v1/sources', { name: 'Validation' })).body.id; });
    const hook = (url: string, headers?: Record<string, string>) => (headers ? { url, headers } : { url });
    const dest = (webhooks: unknown, extra: Record<string, unknown> = {}) => ({ sourceId, type: 'webhooks', enabled: true, settings: { webhooks }, ...extra });
    const cases: Array<[string, () => unknown, string, string]> = [
      ['no webhooks', () => dest([]), 'NO_WEBHOOKS', 'settings.webhooks'],
      ['six webhooks', () => dest(Array.from({ length: 6 }, (_, i) => hook(`https://h${i}.example.com/`))), 'TOO_MANY_WEBHOOKS', 'settings.webhooks'],
      ['relative URL', () => dest([hook('/hook')]), 'INVALID_URL', 'settings.webhooks[0].url'],
      ['ftp scheme', () => dest([hook('ftp://files.example.com/')]), 'INVALID_URL_SCHEME', 'settings.webhooks[0].url'],
      ['javascript scheme', () => dest([hook('javascript:alert(1)')]), 'INVALID_URL_SCHEME', 'settings.webhooks[0].url'],
      ['credentials in URL', () => dest([hook('https://user:pw@example.com/')]), 'INVALID_URL', 'settings.webhooks[0].url'],
      ['loopback 127.0.0.1', () => dest([hook('http://127.0.0.1:9000/')]), 'BLOCKED_ADDRESS', 'settings.webhooks[0].url'],
      ['loopback in decimal', () => dest([hook('http://2130706433/')]), 'BLOCKED_ADDRESS', 'settings.webhooks[0].url'],
      ['loopback ::1', () => dest([hook('https://example.com/'), hook('http://[::1]/')]), 'BLOCKED_ADDRESS', 'settings.webhooks[1].url'],
      ['IPv4-mapped IPv6 loopback', () => dest([hook('http://[::ffff:127.0.0.1]/')]), 'BLOCKED_ADDRESS', 'settings.webhooks[0].url'],
      ['localhost', () => dest([hook('http://localhost:3000/')]), 'BLOCKED_ADDRESS', 'settings.webhooks[0].url'],
      ['private 10.0.0.1', () => dest([hook('http://10.0.0.1/')]), 'BLOCKED_ADDRESS', 'settings.webhooks[0].url'],
      ['private 192.168.1.5', () => dest([hook('http://192.168.1.5/')]), 'BLOCKED_ADDRESS', 'settings.webhooks[0].url'],
      ['link-local 169.254.1.1', () => dest([hook('http://169.254.1.1/')]), 'BLOCKED_ADDRESS', 'settings.webhooks[0].url'],
      ['cloud metadata 169.254.169.254', () => dest([hook('http://169.254.169.254/latest/meta-data/')]), 'BLOCKED_ADDRESS', 'settings.webhooks[0].url'],
      ['header name with a space', () => dest([hook('https://example.com/', { 'Bad Name': 'x' })]), 'INVALID_HEADER', 'settings.webhooks[0].headers.Bad Name'],
      ['header value with CRLF', () => dest([hook('https://example.com/', { 'X-Ok': 'a\r\nInjected: 1' })]), 'INVALID_HEADER', 'settings.webhooks[0].headers.X-Ok'],
      ['reserved header X-Signature', () => dest([hook('https://example.com/', { 'x-signature': 'forged' })]), 'RESERVED_HEADER', 'settings.webhooks[0].headers.x-signature'],
      ['reserved header Content-Length', () => dest([hook('https://example.com/', { 'Content-Length': '1' })]), 'RESERVED_HEADER', 'settings.webhooks[0].headers.Content-Length'],
      ['unknown source', () => ({ ...dest([hook('https://example.com/')]), sourceId: 'src_nope' }), 'UNKNOWN_SOURCE', 'sourceId'],
      ['wrong type', () => dest([hook('https://example.com/')], { type: 'kinesis' }), 'UNSUPPORTED_TYPE', 'type'],
      ['missing settings', () => ({ sourceId, type: 'webhooks' }), 'INVALID_FIELD', 'settings'],
      ['unknown field', () => dest([hook('https://example.com/')], { colour: 'blue' }), 'UNKNOWN_FIELD', 'colour'],
      ['URL not a string', () => dest([{ url: 42 }]), 'INVALID_FIELD', 'settings.webhooks[0].url'],
    ];
    for (const [name, body, code, field] of cases) {
      it(`destination: ${name} → ${code} at ${field}`, async () => {
        const res = await api('POST', '/v1/destinations', body());
        assert.equal(res.status, 400, res.text);
        assert.equal(res.body.code, code, res.text);
        assert.equal(res.body.field, field, res.text);
        assert.equal(typeof res.body.message, 'string');
      });
    }
    it('PATCH applies the same rules', async () => {
      const ok = await api('POST', '/v1/destinations', dest([hook('https://example.com/')]));
      const res = await api('PATCH', `/v1/destinations/${ok.body.id}`, { settings: { webhooks: [hook('http://10.1.2.3/')] } });
      assert.equal(res.status, 400);
      assert.deepEqual([res.body.code, res.body.field], ['BLOCKED_ADDRESS', 'settings.webhooks[0].url']);
    });
    it('sources: empty name, wrong types, malformed JSON', async () => {
      for (const [body, field] of [[{ name: '' }, 'name'], [{ name: 'x', enabled: 'yes' }, 'enabled'], [{}, 'name']] as const) {
        const res = await api('POST', '/v1/sources', body);
        assert.equal(res.status, 400, res.text);
        assert.equal(res.body.field, field);
      }
      const res = await fetch(`${control.url}/v1/sources`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: '{"name":' });
      assert.equal(res.status, 400);
      const body = await res.json() as { code: string };
      assert.equal(body.code, 'INVALID_JSON');
    });
    it('the server\'s own refusals are {code, message} too; a request needing no body is accepted empty whatever its Content-Type', async () => {
      const raw = async (method: string, path: string, headers: Record<string, string>, body?: string) => {
        const res = await fetch(`${control.url}${path}`, { method, headers: { authorization: `Bearer ${token}`, ...headers }, body });
        const text = await res.text();
        return { status: res.status, body: (text ? JSON.parse(text) : {}) as Record<string, unknown> };
      };
      assert.deepEqual(await raw('GET', '/v1/nope', {}), { status: 404, body: { code: 'NOT_FOUND', message: 'no route for GET /v1/nope' } });
      const form = await raw('POST', '/v1/sources', { 'content-type': 'application/x-www-form-urlencoded' }, 'name=x');
      assert.deepEqual([form.status, form.body.code], [415, 'UNSUPPORTED_MEDIA_TYPE']);
      for (const contentType of ['application/json', 'text/plain']) {
        const source = await api('POST', '/v1/sources', { name: `empty-body ${contentType}` });
        const rotated = await raw('POST', `/v1/sources/${source.body.id}/write-keys`, { 'content-type': contentType });
        assert.equal(rotated.status, 201, JSON.stringify(rotated.body));
        assert.equal((await raw('DELETE', `/v1/sources/${source.body.id}`, { 'content-type': contentType })).status, 204);
      }
    });
  });

  it('401 without a token or with a wrong one; 404 for unknown ids; health stays open', async () => {
    assert.equal((await requestJson('GET', `${control.url}/v1/sources`)).status, 401);
    const wrong = await requestJson('GET', `${control.url}/v1/sources`, { token: `${token}x` });
    assert.equal(wrong.status, 401);
    assert.equal(wrong.body.code, 'UNAUTHORIZED');
    assert.equal((await requestJson('GET', `${control.url}/v1/sources`, { headers: { authorization: `Basic ${Buffer.from(`${token}:`).toString('base64')}` } })).status, 401);
    for (const path of ['/v1/sources/src_nope', '/v1/destinations/dst_nope']) {
      const res = await api('GET', path);
      assert.equal(res.status, 404);
      assert.match(res.body.code, /_NOT_FOUND$/);
    }
    assert.equal((await api('PATCH', '/v1/sources/src_nope', { name: 'x' })).status, 404);
    assert.equal((await requestJson('GET', `${control.url}/healthz`)).status, 200);
  });

  it('serves the OpenAPI document kept in the repository', async () => {
    const served = (await requestJson('GET', `${control.url}/openapi.json`)).body;
    const kept = JSON.parse(readFileSync(new URL('../services/control/openapi.json', import.meta.url), 'utf8'));
    assert.deepEqual(served, kept, 'run npm run gen:openapi');
    assert.ok(served.paths['/v1/destinations'].post);
  });

  it('counts admin writes by resource and result, auth failures, deletion requests and dead-letter replays on /metrics', async () => {
    const before = await scrape(control.url);
    // Writes: ok, invalid, conflict, not found.
    const src = await api('POST', '/v1/sources', { name: 'Metrics' });
    assert.equal(src.status, 201);
    assert.equal((await api('PATCH', `/v1/sources/${src.body.id}`, { name: 'Metrics 2' })).status, 200);
    assert.equal((await api('POST', `/v1/sources/${src.body.id}/write-keys`)).status, 201);
    assert.equal((await api('POST', '/v1/sources', { id: src.body.id, name: 'Again' })).status, 400);
    assert.equal((await api('POST', '/v1/sources', { name: '' })).status, 400);
    const dest = await api('POST', '/v1/destinations', { sourceId: src.body.id, type: 'webhooks', settings: { webhooks: [{ url: 'https://hooks.example.com/metrics' }] } });
    assert.equal(dest.status, 201);
    assert.equal((await api('POST', '/v1/destinations', { sourceId: src.body.id, type: 'webhooks', settings: { webhooks: [{ url: 'http://10.0.0.1/' }] } })).status, 400);
    assert.equal((await api('PATCH', '/v1/destinations/dst_nope', { name: 'x' })).status, 404);
    // Auth failures: no token, a wrong token (on a write route: not counted as a write).
    assert.equal((await requestJson('GET', `${control.url}/v1/sources`)).status, 401);
    assert.equal((await requestJson('POST', `${control.url}/v1/sources`, { token: `${token}-wrong`, body: { name: 'Nope' } })).status, 401);
    // A deletion request (one source with an enabled destination: one notification) and a bad one.
    const deletion = await api('POST', '/v1/deletions', { userId: 'metrics-user', sourceIds: [src.body.id] });
    assert.equal(deletion.status, 202);
    assert.equal(deletion.body.notifications, 1);
    assert.equal((await api('POST', '/v1/deletions', { sourceIds: [src.body.id] })).status, 400);
    // A replay of a dead letter the index holds, with an id it does not, and an empty one.
    const writer = await new PipelineWriter().start();
    const dead = task(dest.body.id);
    try {
      await writer.raw(topicNames(prefix).deadLetter, dead.taskId, writer.codec.encode('io.switchyard.pipeline.DeadLetter', { reason: 'permanent_status', status: 410, responseExcerpt: 'gone', error: null, failedAt: Date.now(), task: dead }));
    } finally {
      await writer.stop();
    }
    let letterId: string | undefined;
    for (const deadline = Date.now() + 10_000; !letterId && Date.now() < deadline; await new Promise((r) => setTimeout(r, 100))) {
      letterId = (await api('GET', `/v1/dead-letters?destinationId=${dest.body.id}`)).body.deadLetters[0]?.id;
    }
    assert.ok(letterId, 'the dead letter is indexed within 10 s');
    const replay = await api('POST', '/v1/dead-letters/replay', { ids: [letterId, 'nope'] });
    assert.deepEqual([replay.status, replay.body.replayed, replay.body.notFound], [202, [letterId], ['nope']]);
    assert.equal((await api('POST', '/v1/dead-letters/replay', { ids: [] })).status, 400);

    const after = await scrape(control.url);
    const delta = (name: string, labels: Record<string, string> = {}) => after(name, labels) - before(name, labels);
    const writes = (resource: string, operation: string, result: string) => delta('control_admin_writes_total', { resource, operation, result });
    assert.deepEqual({
      sourceCreateOk: writes('source', 'create', 'ok'), sourceCreateInvalid: writes('source', 'create', 'invalid'), sourceCreateConflict: writes('source', 'create', 'conflict'),
      sourceUpdateOk: writes('source', 'update', 'ok'), writeKeyCreateOk: writes('write_key', 'create', 'ok'),
      destinationCreateOk: writes('destination', 'create', 'ok'), destinationCreateInvalid: writes('destination', 'create', 'invalid'), destinationUpdateNotFound: writes('destination', 'update', 'not_found'),
      allWrites: delta('control_admin_writes_total'),
    }, {
      sourceCreateOk: 1, sourceCreateInvalid: 1, sourceCreateConflict: 1, sourceUpdateOk: 1, writeKeyCreateOk: 1,
      destinationCreateOk: 1, destinationCreateInvalid: 1, destinationUpdateNotFound: 1, allWrites: 8,
    });
    assert.deepEqual({
      authMissing: delta('control_admin_auth_failures_total', { reason: 'missing' }), authInvalid: delta('control_admin_auth_failures_total', { reason: 'invalid' }),
      deletionOk: delta('control_deletion_requests_total', { result: 'ok' }), deletionInvalid: delta('control_deletion_requests_total', { result: 'invalid' }),
      notifications: delta('control_deletion_notifications_total'),
      replayOk: delta('control_dead_letter_replay_requests_total', { result: 'ok' }), replayInvalid: delta('control_dead_letter_replay_requests_total', { result: 'invalid' }),
      lettersReplayed: delta('control_dead_letter_replay_letters_total', { result: 'replayed' }), lettersNotFound: delta('control_dead_letter_replay_letters_total', { result: 'not_found' }),
    }, { authMissing: 1, authInvalid: 1, deletionOk: 1, deletionInvalid: 1, notifications: 1, replayOk: 1, replayInvalid: 1, lettersReplayed: 1, lettersNotFound: 1 });
  });

  it('restarting the control service and a config consumer loses nothing; the seed is not re-applied', async () => {
    const before = (await api('GET', '/v1/sources')).body.sources;
    const code = await control.stop();
    assert.equal(code, 0);
    control = await startService('control', env);
    assert.deepEqual((await api('GET', '/v1/sources')).body.sources, before);
    assert.ok(control.proc.output.some((l) => l.includes('"seed applied"') && l.includes('"written":0')), 'the second start finds the seed already applied');

    const fresh = await openView(prefix);
    try {
      assert.deepEqual(fresh.state.sources().map((s) => s.id).sort(), view.state.sources().map((s) => s.id).sort());
      assert.deepEqual(fresh.state.destinations().map((d) => d.id).sort(), view.state.destinations().map((d) => d.id).sort());
    } finally {
      await fresh.stop();
    }
  });

  it('the shared secret never appears in a response or a log line', () => {
    const logs = control.proc.output.join('\n');
    for (const text of [...responses, logs]) assert.ok(!text.includes(secret), 'secret leaked');
    assert.ok(!logs.includes(token), 'admin token leaked');
  });
});
