// Security checks on the real stack (docs/decisions/0008-webhook-security.md): SSRF refused at the
// admin API in every address notation and at delivery time for a name that resolves to loopback;
// every admin route answers 401 without the right token (and no URL spelling gets around the
// check); and no log line of any service carries a shared secret, a write key, a credential header
// or a token, even at debug level, through retries, dead letters, wrong credentials and config
// updates.
import assert from 'node:assert/strict';
import { lookup } from 'node:dns/promises';
import { hostname } from 'node:os';
import { after, before, describe, it } from 'node:test';
import { classifyAddress } from '@switchyard/platform/net/address-policy';
import { topicNames } from '@switchyard/platform/kafka/topics';
import { requestJson } from './support/http.js';
import { startReceiver, type Receiver } from './support/receiver.js';
import { newSecret, registerSecret } from './support/secrets.js';
import { pipelineEnv, setupTopics, startService, type RunningService } from './support/services.js';
import { uniquePrefix } from './support/stack.js';
import { TopicReader } from './support/topic-reader.js';

type Rec = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- API bodies and decoded records

/** A name other than localhost that this machine resolves to a loopback address (its own host name, usually). */
async function loopbackName(): Promise<string> {
  for (const name of [hostname(), 'vm', 'runsc', 'ip6-localhost', 'ip6-loopback', 'localhost.localdomain']) {
    try {
      const { address } = await lookup(name);
      if (classifyAddress(address) === 'loopback') return name;
    } catch { /* not known here */ }
  }
  throw new Error('no name other than localhost resolves to loopback on this machine');
}

describe('security: SSRF, admin authentication, secrets in logs', () => {
  const prefix = uniquePrefix('security');
  const topics = topicNames(prefix);
  const token = newSecret('security admin token', 'adm-');
  const sharedSecret = newSecret('security shared secret', 'ss-');
  const headerSecret = newSecret('security Authorization header', 'hdr-');
  // Hundreds of deliberate authentication failures from one address: the failure limit (tested in tokens.test.ts) set out of the way.
  const base = pipelineEnv(prefix, { SWITCHYARD_ADMIN_TOKEN: token, LOG_LEVEL: 'debug', SWITCHYARD_RETRY_TIERS: '300ms,600ms', SWITCHYARD_RETRY_DEADLINE: '3s', CONTROL_AUTH_FAILURE_LIMIT: '100000' });
  let strict: RunningService; // control with no allow-list
  let lenient: RunningService; // control allowing 127.0.0.0/8 and 10.0.0.0/8
  let ingest: RunningService;
  let fanout: RunningService;
  let delivery: RunningService;
  let receiver: Receiver;
  let reader: TopicReader;
  const all = () => [strict, lenient, ingest, fanout, delivery].filter(Boolean);
  const api = (svc: RunningService, method: string, path: string, body?: unknown, auth: string | undefined = token) => requestJson(method, `${svc.url}${path}`, { token: auth, body });
  const track = async (writeKey: string, messageId: string, userId = 'sec-user') => {
    const res = await fetch(`${ingest.url}/v1/track`, { method: 'POST', headers: { authorization: `Basic ${Buffer.from(`${writeKey}:`).toString('base64')}`, 'content-type': 'application/json' }, body: JSON.stringify({ userId, event: 'Sec', messageId }) });
    return { status: res.status, body: await res.json() as Rec };
  };

  before(async () => {
    receiver = await startReceiver(() => ({ status: 500, body: 'receiver failing on purpose' }));
    await setupTopics(base);
    [strict, lenient, ingest, fanout, delivery] = await Promise.all([
      startService('control', { ...base, SWITCHYARD_ALLOWED_CIDRS: '' }),
      startService('control', { ...base, SWITCHYARD_ALLOWED_CIDRS: '127.0.0.0/8, 10.0.0.0/8' }),
      startService('ingest', base),
      startService('fanout', base),
      startService('delivery', { ...base, SWITCHYARD_ALLOWED_CIDRS: '' }),
    ]);
    reader = await new TopicReader([topics.deadLetter]).start();
  });
  after(async () => {
    await reader?.stop();
    await Promise.all(all().map((s) => s.stop()));
    await receiver?.close();
  });

  describe('SSRF', () => {
    // WHATWG URL parsing turns 2130706433, 0x7f000001, 0177.0.0.1 and 127.1 into 127.0.0.1 before
    // the policy sees the host; the policy itself then judges the dotted or bracketed form.
    const blocked = [
      'http://127.0.0.1/', 'http://2130706433/', 'http://0x7f000001/', 'http://0x7f.0.0.1/', 'http://0177.0.0.1/', 'http://017700000001/', 'http://127.1/', 'http://127.0.1/',
      'http://[::ffff:127.0.0.1]/', 'http://[::ffff:7f00:1]/', 'http://[0:0:0:0:0:ffff:7f00:1]/', 'http://[::1]/', 'http://[0:0:0:0:0:0:0:1]/', 'http://[::]/',
      'http://[fd12:3456::1]/', 'http://[fc00::1]/', 'http://[fe80::1]/', 'http://[64:ff9b::7f00:1]/', 'http://[::ffff:a9fe:a9fe]/',
      'http://0.0.0.0/', 'http://0/', 'http://169.254.169.254/latest/meta-data/', 'http://2852039166/', 'http://169.254.1.1/', 'http://[fd00:ec2::254]/',
      'http://10.0.0.1/', 'http://10.255.255.255/', 'http://172.16.0.1/', 'http://172.31.255.255/', 'http://192.168.0.1/', 'http://192.168.255.255/',
      'http://100.64.0.1/', 'http://100.127.255.255/', 'https://localhost/', 'http://localhost./', 'http://LOCALHOST:8080/', 'http://app.localhost/', 'http://metadata.google.internal/',
      'http://127.0.0.1.:80/', 'http://[::ffff:10.0.0.1]/', 'http://224.0.0.1/', 'http://255.255.255.255/',
    ];

    const create = (svc: RunningService, sourceId: string, url: string) =>
      api(svc, 'POST', '/v1/destinations', { sourceId, name: 'SSRF', type: 'webhooks', enabled: true, settings: { sharedSecret: null, webhooks: [{ url }] } });

    it(`the admin API refuses ${blocked.length} internal URLs on create and on update, with a 400 naming the field`, async () => {
      const src = (await api(strict, 'POST', '/v1/sources', { name: 'SSRF source' })).body;
      const ok = await create(strict, src.id, 'https://93.184.216.34/hook');
      assert.equal(ok.status, 201, ok.text);
      const refusals: string[] = [];
      for (const url of blocked) {
        for (const res of [await create(strict, src.id, url), await api(strict, 'PATCH', `/v1/destinations/${ok.body.id}`, { settings: { webhooks: [{ url: 'https://93.184.216.34/a' }, { url }] } })]) {
          const where = `${url}: ${res.status} ${res.text}`;
          assert.equal(res.status, 400, where);
          assert.equal(res.body.code, 'BLOCKED_ADDRESS', where);
          assert.match(res.body.field, /^settings\.webhooks\[\d\]\.url$/, where);
          assert.match(res.body.message, /SWITCHYARD_ALLOWED_CIDRS/, where);
          refusals.push(res.body.message);
        }
      }
      // The destination kept its public URL.
      assert.deepEqual((await api(strict, 'GET', `/v1/destinations/${ok.body.id}`)).body.settings.webhooks, [{ url: 'https://93.184.216.34/hook', headers: {}, clientCertificate: null }]);
      console.log(`# SSRF: ${refusals.length} refusals (${blocked.length} URLs × create and update), e.g. "${refusals[1]}"`);
    });

    it('an operator allow-list admits exactly its ranges', async () => {
      const src = (await api(lenient, 'POST', '/v1/sources', { name: 'Allow-listed' })).body;
      for (const url of ['http://127.0.0.1:9/x', 'http://2130706433/', 'http://[::ffff:127.0.0.1]/', 'http://localhost/', 'http://10.1.2.3/']) {
        const res = await create(lenient, src.id, url);
        assert.equal(res.status, 201, `${url}: ${res.text}`);
      }
      for (const url of ['http://169.254.169.254/', 'http://192.168.1.1/', 'http://[::1]/', 'http://172.16.0.1/', 'http://[fd00::1]/']) {
        const res = await create(lenient, src.id, url);
        assert.equal(res.status, 400, `${url}: ${res.text}`);
        assert.equal(res.body.code, 'BLOCKED_ADDRESS');
      }
    });

    it('at delivery time a name resolving to loopback is refused: dead letter blocked_address, nothing reaches the receiver', async () => {
      const name = await loopbackName();
      const src = (await api(strict, 'POST', '/v1/sources', { name: 'DNS rebinding' })).body;
      const url = `http://${name}:${new URL(receiver.url).port}/hook`;
      // The admin API cannot know what a name will resolve to when delivery connects; delivery checks every resolved address.
      const dest = await create(strict, src.id, url);
      assert.equal(dest.status, 201, dest.text);
      await new Promise((r) => setTimeout(r, 1500)); // config reaches fan-out and delivery
      const messageId = `ssrf-${Date.now()}`;
      assert.equal((await track(src.writeKeys[0], messageId)).status, 200);
      const [letter] = await reader.waitFor<Rec>(topics.deadLetter, (v) => JSON.stringify(v).includes(messageId), 1, 20_000);
      assert.equal(letter!.reason, 'blocked_address', JSON.stringify(letter));
      assert.equal(receiver.count(), 0, 'nothing reached the receiver');
      console.log(`# delivery refused ${name} (resolves to loopback): ${JSON.stringify(letter!.error)}`);
      await api(strict, 'DELETE', `/v1/sources/${src.id}`);
    });
  });

  describe('admin authentication', () => {
    /** Every route family; the OpenAPI document adds whatever else is registered and documented. */
    const known: Array<[string, string]> = [
      ['GET', '/v1/sources'], ['POST', '/v1/sources'], ['GET', '/v1/sources/x'], ['PATCH', '/v1/sources/x'], ['DELETE', '/v1/sources/x'],
      ['POST', '/v1/sources/x/write-keys'], ['DELETE', '/v1/sources/x/write-keys/k'], ['GET', '/v1/sources/x/usage'],
      ['GET', '/v1/destinations'], ['POST', '/v1/destinations'], ['GET', '/v1/destinations/x'], ['PATCH', '/v1/destinations/x'], ['DELETE', '/v1/destinations/x'],
      ['GET', '/v1/dead-letters'], ['GET', '/v1/dead-letters/x'], ['POST', '/v1/dead-letters/replay'], ['POST', '/v1/deletions'],
      ['GET', '/v1/audiences'], ['POST', '/v1/audiences'], ['GET', '/v1/audiences/x'], ['PATCH', '/v1/audiences/x'], ['DELETE', '/v1/audiences/x'],
      ['GET', '/v1/computed-traits'], ['POST', '/v1/computed-traits'], ['GET', '/v1/computed-traits/x'], ['DELETE', '/v1/computed-traits/x'],
      ['GET', '/v1/messages/x'], ['GET', '/v1/nothing-here'],
    ];

    it('every /v1 route answers 401 with a JSON body without a token, with a wrong one, or with a near miss', async () => {
      const doc = (await (await fetch(`${strict.url}/openapi.json`)).json()) as { paths: Record<string, Record<string, unknown>> };
      const documented = Object.entries(doc.paths).flatMap(([path, ops]) => Object.keys(ops).filter((m) => ['get', 'post', 'put', 'patch', 'delete'].includes(m))
        .map((m) => [m.toUpperCase(), path.replace(/\{[^}]+\}/g, 'x')] as [string, string]));
      const routes = [...new Map([...known, ...documented].map((r) => [r.join(' '), r])).values()];
      const wrong = [undefined, '', 'Bearer', 'Bearer ', `Bearer ${token}x`, `Bearer ${token.slice(0, -1)}`, `Bearer ${token.toUpperCase()}`, `Basic ${Buffer.from(`${token}:`).toString('base64')}`, token, `Bearer  ${token} extra`, `Token ${token}`];
      for (const w of wrong) if (w) registerSecret(w, 'near-miss admin token');
      let checked = 0;
      for (const [method, path] of routes) {
        for (const authorization of wrong) {
          const res = await fetch(`${strict.url}${path}`, { method, headers: { ...(authorization !== undefined ? { authorization } : {}), ...(method === 'GET' || method === 'DELETE' ? {} : { 'content-type': 'application/json' }) }, body: method === 'GET' || method === 'DELETE' ? undefined : '{}' });
          const text = await res.text();
          const where = `${method} ${path} with ${authorization === undefined ? 'no header' : JSON.stringify(authorization.slice(0, 12))}: ${res.status} ${text}`;
          assert.equal(res.status, 401, where);
          const body = JSON.parse(text) as Rec;
          assert.equal(body.code, 'UNAUTHORIZED', where);
          assert.ok(typeof body.message === 'string' && !body.message.includes(token), where);
          checked++;
        }
      }
      // The right token still works, and the open endpoints stay open.
      assert.equal((await api(strict, 'GET', '/v1/sources')).status, 200);
      for (const open of ['/healthz', '/readyz', '/metrics', '/openapi.json']) assert.equal((await fetch(`${strict.url}${open}`)).status, 200, open);
      console.log(`# 401 checks: ${checked} (${routes.length} routes × ${wrong.length} credentials)`);
    });

    it('no spelling of a path reaches a /v1 route without the token', async () => {
      const spellings = ['/%761/sources', '/v%31/sources', '/v1%2Fsources', '/v1/%73ources', '//v1/sources', '/v1//sources', '/./v1/sources', '/v1/./sources', '/x/../v1/sources', '/V1/sources',
        '/v1/sources/', '/v1/sources?x=1', '/v1/sources;x', '/v1/sources%00', '/v1/sources%20', '/v1/sources/..', '/v1/sources/x/..', '/%2Fv1/sources'];
      for (const path of spellings) {
        for (const method of ['GET', 'POST']) {
          const res = await fetch(`${strict.url}${path}`, { method, headers: method === 'POST' ? { 'content-type': 'application/json' } : {}, body: method === 'POST' ? JSON.stringify({ name: 'sneaky' }) : undefined });
          const text = await res.text();
          assert.ok([400, 401, 404].includes(res.status), `${method} ${path}: ${res.status} ${text}`);
          assert.ok(!text.includes('writeKeys') && !text.includes('"sources"'), `${method} ${path} leaked data: ${text}`);
        }
      }
      assert.ok(!(await api(strict, 'GET', '/v1/sources')).body.sources.some((s: Rec) => s.name === 'sneaky'), 'no source was created');
    });

    it('wrong write keys are refused with 401 and a JSON body', async () => {
      const src = (await api(strict, 'POST', '/v1/sources', { name: 'Keys' })).body;
      const key: string = src.writeKeys[0];
      for (const wrong of [`${key.slice(0, -1)}${key.endsWith('A') ? 'B' : 'A'}`, `${key}x`, key.slice(0, 8), key.toUpperCase(), `x${key}`]) {
        registerSecret(wrong, 'wrong write key');
        const res = await track(wrong, `wk-${Date.now()}`);
        assert.equal(res.status, 401, JSON.stringify(res.body));
        assert.equal(res.body.code, 'INVALID_WRITE_KEY');
      }
      await api(strict, 'DELETE', `/v1/sources/${src.id}`);
    });
  });

  describe('secrets in logs', () => {
    it('a failing destination with a shared secret and an Authorization header is retried and dead-lettered, at debug level, and no log line shows a secret', async () => {
      // Delivery again, now allowed to reach the failing receiver on 127.0.0.1.
      await delivery.stop();
      delivery = await startService('delivery', { ...base, SWITCHYARD_ALLOWED_CIDRS: '127.0.0.0/8' });
      const src = (await api(lenient, 'POST', '/v1/sources', { name: 'Secretive' })).body;
      const extraKey = (await api(lenient, 'POST', `/v1/sources/${src.id}/write-keys`)).body.writeKey as string;
      const settings = { sharedSecret, webhooks: [{ url: receiver.url, headers: { Authorization: `Bearer ${headerSecret}`, 'X-Api-Key': headerSecret } }] };
      const dest = await api(lenient, 'POST', '/v1/destinations', { sourceId: src.id, name: 'Secret hooks', type: 'webhooks', enabled: true, settings });
      assert.equal(dest.status, 201, dest.text);
      // Config updates carrying the secrets, and one rotating the secret.
      const rotated = newSecret('rotated shared secret', 'ss2-');
      assert.equal((await api(lenient, 'PATCH', `/v1/destinations/${dest.body.id}`, { settings: { ...settings, sharedSecret: rotated } })).status, 200);
      assert.equal((await api(lenient, 'PATCH', `/v1/sources/${src.id}`, { name: 'Secretive 2' })).status, 200);
      await new Promise((r) => setTimeout(r, 1500));

      const ids = [`sec-${Date.now()}-a`, `sec-${Date.now()}-b`];
      assert.equal((await track(src.writeKeys[0], ids[0]!)).status, 200);
      assert.equal((await track(extraKey, ids[1]!)).status, 200);
      const letters = await reader.waitFor<Rec>(topics.deadLetter, (v) => ids.some((id) => JSON.stringify(v).includes(id)), 2, 30_000);
      assert.deepEqual(letters.map((l) => l.reason), ['deadline', 'deadline']);
      assert.ok(receiver.count() >= 4, `retried (${receiver.count()} attempts)`);
      assert.equal(receiver.requests[0]!.headers.authorization, `Bearer ${headerSecret}`, 'the header itself was sent');
      // Wrong admin tokens at the lenient control too, and a secret-bearing body refused by validation.
      await api(lenient, 'GET', '/v1/sources', undefined, `${token}-wrong`);
      await api(lenient, 'POST', '/v1/destinations', { sourceId: src.id, type: 'webhooks', settings: { sharedSecret, webhooks: [{ url: 'ftp://x/', headers: { Authorization: headerSecret } }] } });
      await api(lenient, 'DELETE', `/v1/sources/${src.id}/write-keys/${extraKey}`);
      await new Promise((r) => setTimeout(r, 500));

      const secrets: Array<[string, string]> = [
        ['admin token', token], ['shared secret', sharedSecret], ['rotated shared secret', rotated], ['header secret', headerSecret],
        ['write key', src.writeKeys[0]], ['extra write key', extraKey],
      ].flatMap(([label, value]) => [[label, value], [`${label} (base64)`, Buffer.from(`${value}:`).toString('base64')]] as Array<[string, string]>);
      let lines = 0;
      const leaks: string[] = [];
      for (const svc of all()) {
        for (const [i, line] of svc.proc.output.entries()) {
          lines++;
          for (const [label, value] of secrets) if (line.includes(value)) leaks.push(`${svc.proc.name} line ${i + 1}: ${label}`);
        }
      }
      console.log(`# log scan: ${lines} lines from ${all().length} running services (plus the stopped delivery, scanned by npm test), ${secrets.length} secret forms, ${leaks.length} leaks`);
      assert.ok(lines > 0, 'there were lines to scan');
      assert.deepEqual(leaks, []);
    });
  });
});
