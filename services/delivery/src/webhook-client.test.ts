import { strict as assert } from 'node:assert';
import { createHmac } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { createServer as createTcpServer, type Server as TcpServer, type Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { Worker } from 'node:worker_threads';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AddressPolicy } from '@switchyard/platform/net/address-policy';
import { makeTestCa, makeTestCertificate } from '@switchyard/platform/test-support/tls-material';
import { selfSignedCertificate } from '../../../test/support/receiver.js';
import { classifyAttempt } from './outcome.js';
import { signature, WebhookClient } from './webhook-client.js';

// Real HTTP servers on 127.0.0.1: the client's handling of each kind of answer (and of none).
type Handler = (req: IncomingMessage, res: ServerResponse, body: Buffer) => void;

describe('signature', () => {
  it('is the hex HMAC-SHA1 of the body that createHmac computes, for short, block-sized, long and non-ASCII secrets', () => {
    const secrets = ['s3cret', '', 'k'.repeat(63), 'k'.repeat(64), 'k'.repeat(65), 'x'.repeat(300), 'clé-secrète-ü', '🔑'.repeat(20)];
    const bodies = [Buffer.alloc(0), Buffer.from('{"type":"track"}'), Buffer.from('é'.repeat(5000))];
    for (const secret of secrets) {
      for (const body of bodies) {
        // Twice: the second call uses the padded keys kept for the secret.
        for (let i = 0; i < 2; i++) assert.equal(signature(body, secret), createHmac('sha1', secret).update(body).digest('hex'), `secret ${JSON.stringify(secret)}, ${body.length} bytes`);
      }
    }
  });
});

describe('WebhookClient', () => {
  let server: Server;
  let base = '';
  const routes = new Map<string, Handler>();
  const client = new WebhookClient({ policy: new AddressPolicy(['127.0.0.0/8']), timeoutMs: 500, userAgent: 'Switchyard/1.0', excerptBytes: 16 });

  before(async () => {
    server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => (routes.get(req.url ?? '') ?? ((_q, r) => r.end()))(req, res, Buffer.concat(chunks)));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  });
  after(async () => {
    await client.close();
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });

  it('posts the body with the signature, content type and user agent, and reads status and excerpt', async () => {
    let seen: { headers: IncomingMessage['headers']; body: string } | undefined;
    routes.set('/ok?x=1', (req, res, body) => { seen = { headers: req.headers, body: body.toString() }; res.writeHead(201).end('accepted, thank you very much'); });
    const body = Buffer.from('{"type":"track"}');
    const result = await client.post({ url: `${base}/ok?x=1`, body, headers: { authorization: 'Bearer abc' }, sharedSecret: 's3cret' });
    assert.deepEqual(result, { kind: 'response', status: 201, bodyExcerpt: 'accepted, thank ', retryAfterMs: undefined });
    assert.equal(seen?.body, '{"type":"track"}');
    assert.equal(seen?.headers['x-signature'], signature(body, 's3cret'));
    assert.equal(seen?.headers['content-type'], 'application/json');
    assert.equal(seen?.headers['user-agent'], 'Switchyard/1.0');
    assert.equal(seen?.headers.authorization, 'Bearer abc');
  });

  it('reports Retry-After of a 503', async () => {
    routes.set('/busy', (_req, res) => { res.writeHead(503, { 'retry-after': '7' }).end(); });
    const result = await client.post({ url: `${base}/busy`, body: Buffer.from('{}'), headers: {}, sharedSecret: null });
    assert.equal(result.kind, 'response');
    assert.equal(result.kind === 'response' && result.status, 503);
    assert.ok(result.kind === 'response' && result.retryAfterMs !== undefined && result.retryAfterMs >= 6000 && result.retryAfterMs <= 7000);
    // Header names are matched whatever their case on the wire; the first of two counts.
    routes.set('/busy-caps', (_req, res) => { res.writeHead(429, [['X-Other', 'a'], ['RETRY-AFTER', '3'], ['Retry-After', '9']]).end(); });
    const caps = await client.post({ url: `${base}/busy-caps`, body: Buffer.from('{}'), headers: {}, sharedSecret: null });
    assert.equal(caps.kind === 'response' && caps.retryAfterMs, 3000);
  });

  it('times out a receiver that never answers, and one that answers byte by byte past the limit', async () => {
    routes.set('/hang', () => {});
    routes.set('/drip', (_req, res) => {
      res.writeHead(200);
      const t = setInterval(() => { if (!res.destroyed) res.write('x'); else clearInterval(t); }, 50);
      res.on('close', () => clearInterval(t));
    });
    for (const path of ['/hang', '/drip']) {
      const started = Date.now();
      const result = await client.post({ url: `${base}${path}`, body: Buffer.from('{}'), headers: {}, sharedSecret: null });
      assert.deepEqual(result, { kind: 'error', error: 'timeout', message: 'no response within the time limit' }, path);
      assert.ok(Date.now() - started < 5000, `${path} bounded by the 500 ms timeout (the drip would go on for ever)`);
    }
  });

  it('after the process was frozen past the timeout, reads a response that arrived meanwhile rather than calling it a timeout', async () => {
    // The receiver runs in a worker thread, so it answers while this thread is blocked (as a
    // SIGSTOP or a starved machine would stop it).
    const worker = new Worker(`
      const { createServer } = require('node:http');
      const { parentPort } = require('node:worker_threads');
      const server = createServer((req, res) => { req.resume(); req.on('end', () => setTimeout(() => res.writeHead(200).end('ok'), 150)); });
      server.listen(0, '127.0.0.1', () => parentPort.postMessage(server.address().port));
      parentPort.on('message', () => server.close(() => process.exit(0)));
    `, { eval: true });
    try {
      const port = await new Promise<number>((resolve) => worker.once('message', resolve));
      const answered = client.post({ url: `http://127.0.0.1:${port}/`, body: Buffer.from('{}'), headers: {}, sharedSecret: null });
      await new Promise((r) => setTimeout(r, 50)); // the request is on the wire; the answer comes 150 ms after it
      // Frozen for 4 × the 500 ms limit, in the check phase: the event loop's next turn runs timers
      // before it reads the socket, as after a SIGSTOP anywhere but in the poll itself.
      await new Promise((r) => setImmediate(r));
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 2000);
      assert.deepEqual(await answered, { kind: 'response', status: 200, bodyExcerpt: 'ok', retryAfterMs: undefined });
    } finally {
      worker.postMessage('stop');
      await new Promise((r) => worker.once('exit', r));
    }
  });

  it('classifies a reset connection and a refused one', async () => {
    routes.set('/reset', (req) => { req.socket.destroy(); });
    const reset = await client.post({ url: `${base}/reset`, body: Buffer.from('{}'), headers: {}, sharedSecret: null });
    assert.equal(reset.kind === 'error' && reset.error, 'reset');
    const refused = await client.post({ url: 'http://127.0.0.1:1/none', body: Buffer.from('{}'), headers: {}, sharedSecret: null });
    assert.equal(refused.kind === 'error' && refused.error, 'connect');
  });

  it('cuts off a huge response body and still reports its status', async () => {
    routes.set('/huge', (_req, res) => { res.writeHead(500); res.end(Buffer.alloc(1 << 20, 'a')); });
    const result = await client.post({ url: `${base}/huge`, body: Buffer.from('{}'), headers: {}, sharedSecret: null });
    assert.deepEqual(result, { kind: 'response', status: 500, bodyExcerpt: 'a'.repeat(16), retryAfterMs: undefined });
  });

  it('refuses blocked addresses and bad URLs without a request', async () => {
    const strict = new WebhookClient({ policy: new AddressPolicy([]), timeoutMs: 500, userAgent: 'Switchyard/1.0' });
    try {
      const blocked = await strict.post({ url: `${base}/ok`, body: Buffer.from('{}'), headers: {}, sharedSecret: null });
      assert.equal(blocked.kind === 'error' && blocked.error, 'blocked_address');
      const named = await strict.post({ url: 'http://localhost:1/x', body: Buffer.from('{}'), headers: {}, sharedSecret: null });
      assert.equal(named.kind === 'error' && named.error, 'blocked_address');
      const scheme = await strict.post({ url: 'ftp://example.com/x', body: Buffer.from('{}'), headers: {}, sharedSecret: null });
      assert.equal(scheme.kind === 'error' && scheme.error, 'invalid_url');
    } finally {
      await strict.close();
    }
  });

  describe('HTTPS: only a certificate that does not verify is a TLS failure', () => {
    const listen = async (server: TcpServer): Promise<string> => {
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
      return `https://127.0.0.1:${(server.address() as { port: number }).port}/hook`;
    };
    const close = (server: TcpServer) => new Promise((r) => server.close(r));
    const post = (url: string) => client.post({ url, body: Buffer.from('{}'), headers: {}, sharedSecret: null });

    /** Posts to a raw TCP server that misbehaves as `onConnection` says; the attempt must be a retried connection error. */
    const retriedConnectionError = async (onConnection: (socket: Socket) => void, expected?: string) => {
      const server = createTcpServer(onConnection);
      try {
        const result = await post(await listen(server));
        assert.equal(result.kind, 'error');
        const error = result.kind === 'error' ? result.error : undefined;
        if (expected) assert.equal(error, expected, JSON.stringify(result));
        assert.notEqual(error, 'tls', JSON.stringify(result));
        assert.equal(classifyAttempt(result).verdict, 'retry');
      } finally { await close(server); }
    };

    it('a receiver that closes the connection during the handshake is retried', () => retriedConnectionError((socket) => socket.destroy()));

    it('a receiver that resets the connection during the handshake is retried', () => retriedConnectionError((socket) => socket.resetAndDestroy(), 'reset'));

    it('a receiver that answers the handshake with plain HTTP is retried (a misrouted listener may be mid-deploy)', () =>
      retriedConnectionError((socket) => { socket.once('data', () => socket.end('HTTP/1.1 400 Bad Request\r\n\r\n')); }));

    it('a self-signed certificate is a TLS failure: no request, not retried', async () => {
      let requests = 0;
      const server = createHttpsServer(selfSignedCertificate(), (_req, res) => { requests++; res.end(); });
      try {
        const result = await post(await listen(server));
        assert.equal(result.kind === 'error' && result.error, 'tls', JSON.stringify(result));
        assert.deepEqual(classifyAttempt(result), { verdict: 'permanent', reason: 'tls' });
        assert.equal(requests, 0);
      } finally { server.closeAllConnections(); await close(server); }
    });
  });

  describe('mutual TLS: a receiver requiring a client certificate', () => {
    // A CA the client trusts, a server certificate and a client certificate it signed, and a client
    // certificate of another CA, made by openssl for these tests.
    const dir = mkdtempSync(join(tmpdir(), 'switchyard-mtls-'));
    const ca = makeTestCa(dir, 'receiver-ca');
    const stranger = makeTestCa(dir, 'stranger-ca');
    const server = makeTestCertificate(dir, ca, 'receiver', ['IP:127.0.0.1']);
    const good = makeTestCertificate(dir, ca, 'client', ['DNS:switchyard.example']);
    const other = makeTestCertificate(dir, stranger, 'other-client', ['DNS:switchyard.example']);
    const mtls = new WebhookClient({ policy: new AddressPolicy(['127.0.0.0/8']), timeoutMs: 2000, userAgent: 'Switchyard/1.0', ca: ca.pem });
    after(async () => { await mtls.close(); rmSync(dir, { recursive: true, force: true }); });

    /** An HTTPS receiver requiring a certificate of `ca`, at most `maxVersion`; counts the requests it sees. */
    const receiver = async (maxVersion: 'TLSv1.2' | 'TLSv1.3') => {
      const seen: string[] = [];
      const https = createHttpsServer({ cert: server.cert, key: server.key, ca: ca.pem, requestCert: true, rejectUnauthorized: true, maxVersion }, (req, res) => {
        seen.push(String((req.socket as unknown as { getPeerCertificate(): { subject?: { CN?: string } } }).getPeerCertificate().subject?.CN));
        res.end('ok');
      });
      await new Promise<void>((r) => https.listen(0, '127.0.0.1', r));
      const url = `https://127.0.0.1:${(https.address() as { port: number }).port}/hook`;
      return { url, seen, close: () => { https.closeAllConnections(); return new Promise((r) => https.close(r)); } };
    };
    const send = (url: string, certificate?: { cert: string; key: string }, destinationId = 'd1') =>
      mtls.post({ url, body: Buffer.from('{}'), headers: {}, sharedSecret: null, ...(certificate ? { clientCertificate: { destinationId, certificate } } : {}) });

    for (const version of ['TLSv1.3', 'TLSv1.2'] as const) {
      it(`${version}: with the certificate the request is accepted; without it, a TLS failure, no request, not retried`, async () => {
        const r = await receiver(version);
        try {
          const accepted = await send(r.url, { cert: good.cert, key: good.key });
          assert.equal(accepted.kind === 'response' && accepted.status, 200, JSON.stringify(accepted));
          assert.deepEqual(r.seen, ['client']);
          const refused = await send(r.url);
          assert.equal(refused.kind === 'error' && refused.error, 'tls', JSON.stringify(refused));
          assert.deepEqual(classifyAttempt(refused), { verdict: 'permanent', reason: 'tls' });
          assert.equal(r.seen.length, 1, 'the receiver saw no request without the certificate');
        } finally { await r.close(); }
      });
    }

    it('a changed certificate is presented from the next request on (a new dispatcher)', async () => {
      const r = await receiver('TLSv1.3');
      try {
        const before = await send(r.url, { cert: other.cert, key: other.key }, 'rotating');
        // Node's https server closes on an untrusted certificate without an alert: a retried reset.
        assert.equal(before.kind, 'error', JSON.stringify(before));
        assert.equal(r.seen.length, 0);
        const after = await send(r.url, { cert: good.cert, key: good.key }, 'rotating');
        assert.equal(after.kind === 'response' && after.status, 200, JSON.stringify(after));
        assert.deepEqual(r.seen, ['client']);
      } finally { await r.close(); }
    });
  });
});
