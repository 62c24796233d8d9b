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
