import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { describe, it } from 'node:test';
import { createLogger } from './logger.js';

function capture(): { lines: string[]; stream: Writable } {
  const lines: string[] = [];
  const stream = new Writable({ write(chunk: Buffer, _enc, done) { lines.push(chunk.toString()); done(); } });
  return { lines, stream };
}

describe('logger redaction: Kafka and registry credentials', () => {
  it('censors kafkajs sasl/ssl options, registry auth and the variables holding secrets', async () => {
    const { lines, stream } = capture();
    const logger = createLogger({ service: 't', destination: stream });
    logger.info({
      sasl: { mechanism: 'scram-sha-512', username: 'u', password: 'sasl-secret-1' },
      client: { sasl: { password: 'sasl-secret-2' }, ssl: { key: 'PRIVATE-KEY-3', passphrase: 'pass-4', ca: ['ca'] } },
      registryAuth: { username: 'r', password: 'reg-secret-5' },
      config: {
        KAFKA_SASL_PASSWORD: 'var-secret-6', KAFKA_SSL_KEY_PASSWORD: 'var-secret-7', SCHEMA_REGISTRY_BASIC_AUTH_USER_INFO: { username: 'r', password: 'var-secret-8' },
        KAFKA_SSL_KEY_FILE: { path: '/k.pem', pem: 'PRIVATE-KEY-9' }, KAFKA_SASL_USERNAME: 'switchyard-ingest',
      },
      a: { b: { password: 'deep-secret-10' } },
    }, 'connecting');
    await new Promise((r) => setImmediate(r));
    const line = lines.join('');
    for (const secret of ['sasl-secret-1', 'sasl-secret-2', 'PRIVATE-KEY-3', 'pass-4', 'reg-secret-5', 'var-secret-6', 'var-secret-7', 'var-secret-8', 'PRIVATE-KEY-9', 'deep-secret-10']) {
      assert.doesNotMatch(line, new RegExp(secret), secret);
    }
    assert.match(line, /switchyard-ingest/);
    assert.match(line, /\/k\.pem/);
  });
});

describe('logger redaction: webhook client certificates', () => {
  it('censors a client certificate alone, in a destination record, in a request body and in undici connect options', async () => {
    const { lines, stream } = capture();
    const logger = createLogger({ service: 't', destination: stream });
    const cert = (n: number) => ({ cert: `CERT-PEM-${n}`, key: `KEY-PEM-${n}` });
    logger.info({
      clientCertificate: cert(1),
      destination: { id: 'd', webhooks: [{ url: 'https://a.example/x', headers: {}, clientCertificate: cert(2) }, { url: 'https://b.example/y', clientCertificate: cert(3) }] },
      req: { body: { settings: { webhooks: [{ url: 'https://c.example/z', clientCertificate: cert(4) }] } } },
      webhooks: [{ url: 'https://d.example/w', clientCertificate: cert(5) }],
      dispatcher: { connect: { timeout: 5000, cert: 'CERT-PEM-6', key: 'KEY-PEM-6' } },
    }, 'configured');
    await new Promise((r) => setImmediate(r));
    const line = lines.join('');
    for (const n of [1, 2, 3, 4, 5, 6]) assert.doesNotMatch(line, new RegExp(`KEY-PEM-${n}`), `key ${n}`);
    for (const n of [1, 2, 3, 4, 5]) assert.doesNotMatch(line, new RegExp(`CERT-PEM-${n}`), `certificate ${n}`);
    assert.match(line, /https:\/\/b\.example\/y/, 'the rest of the record is kept');
  });
});
