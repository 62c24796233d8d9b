// Mutual TLS on the real stack: a CA, a receiver certificate and a client certificate made here
// with openssl; HTTPS receivers on 127.0.0.1 that require a client certificate of that CA
// (requestCert, rejectUnauthorized). A destination whose webhook carries the certificate gets its
// calls; one without it gets no request, and its attempt fails with reason tls. The admin API
// never returns the certificate or its key, and the key never reaches a log (the run's log scan).
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { makeTestCa, makeTestCertificate, type TestCertificate } from '@switchyard/platform/test-support/tls-material';
import { requestJson } from './support/http.js';
import { scrape } from './support/metrics.js';
import { newSecret, registerSecret } from './support/secrets.js';
import { pipelineEnv, setupTopics, startService, type RunningService } from './support/services.js';
import { uniquePrefix } from './support/stack.js';

/** Polls `read` until `done` holds (or fails with the last value after `timeoutMs`). */
async function eventually<T>(read: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) assert.fail(`condition not met within ${timeoutMs} ms; last value: ${JSON.stringify(value)}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

interface MtlsReceiver { url: string; bodies: string[]; close(): Promise<void> }

/** An HTTPS receiver that requires a client certificate signed by `caPem`; records each request body. */
async function startMtlsReceiver(server: TestCertificate, caPem: string): Promise<MtlsReceiver> {
  const bodies: string[] = [];
  const https: Server = createServer({ cert: server.cert, key: server.key, ca: caPem, requestCert: true, rejectUnauthorized: true }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => { bodies.push(Buffer.concat(chunks).toString('utf8')); res.writeHead(200).end('ok'); });
  });
  await new Promise<void>((r) => https.listen(0, '127.0.0.1', r));
  return {
    url: `https://127.0.0.1:${(https.address() as { port: number }).port}/hook`,
    bodies,
    close: () => { https.closeAllConnections(); return new Promise((r) => https.close(() => r())); },
  };
}

/** The base64 lines of a PEM: what would show if the PEM were logged, escaped or not. */
const pemLines = (pem: string) => pem.split('\n').filter((line) => line.length >= 40 && !line.startsWith('-----'));

describe('mutual TLS: a webhook with a client certificate', () => {
  const prefix = uniquePrefix('mtls');
  const token = newSecret('mtls admin token', 'mtls-admin-');
  const dir = mkdtempSync(join(tmpdir(), 'switchyard-mtls-'));
  const ca = makeTestCa(dir, 'receivers-ca');
  const serverCert = makeTestCertificate(dir, ca, 'receiver', ['IP:127.0.0.1']);
  const clientCert = makeTestCertificate(dir, ca, 'switchyard-client', ['DNS:switchyard.example']);
  const otherCert = makeTestCertificate(dir, makeTestCa(dir, 'other-ca'), 'other-client', ['DNS:switchyard.example']);
  for (const line of pemLines(clientCert.key)) registerSecret(line, 'client certificate key');
  const services: RunningService[] = [];
  let control: RunningService;
  let ingest: RunningService;
  let delivery: RunningService;
  let withCert: MtlsReceiver;
  let withoutCert: MtlsReceiver;
  let writeKey = '';
  const ids = { withCert: '', withoutCert: '' };
  const api = (method: string, path: string, body?: unknown) => requestJson(method, `${control.url}${path}`, { token, body });
  /** No PEM of the client certificate, nor of its key, in an answer. */
  const assertNoPem = (text: string, what: string) => {
    assert.ok(!text.includes('BEGIN'), `${what}: no PEM block`);
    for (const line of [...pemLines(clientCert.key), ...pemLines(clientCert.cert)]) assert.ok(!text.includes(line), `${what}: no line of the certificate or key`);
  };

  before(async () => {
    [withCert, withoutCert] = await Promise.all([startMtlsReceiver(serverCert, ca.pem), startMtlsReceiver(serverCert, ca.pem)]);
    // Delivery trusts the receivers' CA as a deployment would a private one.
    const env = pipelineEnv(prefix, { SWITCHYARD_ADMIN_TOKEN: token, SWITCHYARD_ALLOWED_CIDRS: '127.0.0.0/8', NODE_EXTRA_CA_CERTS: ca.certFile });
    await setupTopics(env);
    [control, ingest] = await Promise.all([startService('control', env), startService('ingest', env)]);
    services.push(control, ingest);
    const [fanout, started] = await Promise.all([startService('fanout', env), startService('delivery', env)]);
    delivery = started;
    services.push(fanout, delivery);
    const source = await api('POST', '/v1/sources', { name: 'mTLS', id: 'mtls' });
    assert.equal(source.status, 201, source.text);
    writeKey = source.body.writeKeys[0];
  });
  after(async () => {
    await Promise.all(services.map((s) => s.stop()));
    await Promise.all([withCert?.close(), withoutCert?.close()]);
    rmSync(dir, { recursive: true, force: true });
  });

  it('the API refuses a key that does not belong to the certificate, naming the field, without the PEM', async () => {
    const refused = await api('POST', '/v1/destinations', {
      sourceId: 'mtls', type: 'webhooks', settings: { webhooks: [{ url: withCert.url, clientCertificate: { cert: clientCert.cert, key: otherCert.key } }] },
    });
    assert.equal(refused.status, 400, refused.text);
    assert.deepEqual([refused.body.code, refused.body.field], ['INVALID_CLIENT_CERTIFICATE', 'settings.webhooks[0].clientCertificate.key']);
    assert.ok(!refused.text.includes('BEGIN'));
  });

  it('create, get, list and update answer {"set": true}, never the certificate or key; an update without it keeps it', async () => {
    const created = await api('POST', '/v1/destinations', {
      sourceId: 'mtls', type: 'webhooks', name: 'with certificate',
      settings: { webhooks: [{ url: withCert.url, clientCertificate: { cert: clientCert.cert, key: clientCert.key } }] },
    });
    assert.equal(created.status, 201, created.text);
    ids.withCert = created.body.id;
    assert.deepEqual(created.body.settings.webhooks, [{ url: withCert.url, headers: {}, clientCertificate: { set: true } }]);
    assertNoPem(created.text, 'create');
    const without = await api('POST', '/v1/destinations', { sourceId: 'mtls', type: 'webhooks', name: 'without certificate', settings: { webhooks: [{ url: withoutCert.url }] } });
    assert.equal(without.status, 201, without.text);
    ids.withoutCert = without.body.id;
    assert.equal(without.body.settings.webhooks[0].clientCertificate, null);

    const got = await api('GET', `/v1/destinations/${ids.withCert}`);
    assert.deepEqual(got.body.settings.webhooks[0].clientCertificate, { set: true });
    assertNoPem(got.text, 'get');
    const listed = await api('GET', '/v1/destinations?sourceId=mtls');
    assert.equal(listed.status, 200, listed.text);
    assertNoPem(listed.text, 'list');
    // The webhooks list sent back as GET shows it, less the write-only field: the certificate stays.
    const updated = await api('PATCH', `/v1/destinations/${ids.withCert}`, { settings: { webhooks: [{ url: withCert.url, headers: { 'X-Team': 'data' } }] } });
    assert.equal(updated.status, 200, updated.text);
    assert.deepEqual(updated.body.settings.webhooks[0], { url: withCert.url, headers: { 'X-Team': 'data' }, clientCertificate: { set: true } });
    assertNoPem(updated.text, 'update');
  });

  it('with the certificate the call is delivered; without it the receiver sees no request and the attempt fails with tls', async () => {
    const messageId = `mtls-${prefix}`;
    await eventually(async () => {
      // The config view of fan-out may lag the API by a moment: send until the receiver has it.
      if (withCert.bodies.some((b) => b.includes(messageId))) return true;
      const sent = await requestJson('POST', `${ingest.url}/v1/track`, {
        body: { messageId, userId: 'u-1', event: 'Secured' },
        headers: { authorization: `Basic ${Buffer.from(`${writeKey}:`).toString('base64')}` },
      });
      assert.equal(sent.status, 200, sent.text);
      await new Promise((r) => setTimeout(r, 1000));
      return withCert.bodies.some((b) => b.includes(messageId));
    }, (done) => done, 30_000);
    assert.equal(JSON.parse(withCert.bodies.find((b) => b.includes(messageId))!).event, 'Secured');

    const trace = await eventually(() => api('GET', `/v1/messages/${messageId}`), (r) => r.status === 200
      && (r.body.destinations as Array<{ destinationId: string; state: string }>).some((d) => d.destinationId === ids.withoutCert && d.state === 'dead_lettered'));
    const refused = (trace.body.destinations as Array<Record<string, any>>).find((d) => d.destinationId === ids.withoutCert)!;
    assert.equal(refused.deadLetterReason, 'tls');
    assert.equal(refused.attempts[0].error, 'tls');
    assert.equal(refused.attempts[0].status, null);
    const delivered = (trace.body.destinations as Array<Record<string, any>>).find((d) => d.destinationId === ids.withCert)!;
    assert.equal(delivered.state, 'delivered');
    assert.equal(withoutCert.bodies.length, 0, 'the receiver requiring a certificate saw no request without one');
    const metric = await scrape(delivery.url);
    assert.ok(metric('delivery_dead_letters_total', { reason: 'tls' }) > 0, 'counted as a tls dead letter');
  });
});
