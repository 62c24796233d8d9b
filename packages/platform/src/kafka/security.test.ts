import assert from 'node:assert/strict';
import { Socket } from 'node:net';
import { describe, it } from 'node:test';
import { createKafka } from './client.js';
import { createLogger } from '../logger.js';
import { describeKafkaSecurity, kafkaSecurityOptions } from './security.js';

const ca = { path: '/etc/kafka/ca.pem', pem: 'CA-PEM' };

describe('kafkaSecurityOptions: Kafka\'s names to kafkajs options', () => {
  it('PLAINTEXT: neither ssl nor sasl', () => {
    assert.deepEqual(kafkaSecurityOptions({ KAFKA_SECURITY_PROTOCOL: 'PLAINTEXT' }), {});
  });

  it('SSL without files: TLS with Node\'s default roots', () => {
    assert.deepEqual(kafkaSecurityOptions({ KAFKA_SECURITY_PROTOCOL: 'SSL' }), { ssl: true });
  });

  it('SSL with a CA and a client certificate (mTLS); verification never turned off', () => {
    const { ssl } = kafkaSecurityOptions({
      KAFKA_SECURITY_PROTOCOL: 'SSL', KAFKA_SSL_CA_FILE: ca, KAFKA_SSL_CERT_FILE: { path: 'c', pem: 'CERT' }, KAFKA_SSL_KEY_FILE: { path: 'k', pem: 'KEY' }, KAFKA_SSL_KEY_PASSWORD: 'kp',
    });
    assert.deepEqual(ssl, { ca: ['CA-PEM'], cert: 'CERT', key: 'KEY', passphrase: 'kp' });
    assert.equal(typeof ssl === 'object' && 'rejectUnauthorized' in ssl, false);
  });

  it('SASL_PLAINTEXT and SASL_SSL with each mechanism', () => {
    for (const [mechanism, kafkajs] of [['PLAIN', 'plain'], ['SCRAM-SHA-256', 'scram-sha-256'], ['SCRAM-SHA-512', 'scram-sha-512']] as const) {
      assert.deepEqual(kafkaSecurityOptions({ KAFKA_SECURITY_PROTOCOL: 'SASL_PLAINTEXT', KAFKA_SASL_MECHANISM: mechanism, KAFKA_SASL_USERNAME: 'u', KAFKA_SASL_PASSWORD: 'p' }), { sasl: { mechanism: kafkajs, username: 'u', password: 'p' } });
    }
    const both = kafkaSecurityOptions({ KAFKA_SECURITY_PROTOCOL: 'SASL_SSL', KAFKA_SSL_CA_FILE: ca, KAFKA_SASL_MECHANISM: 'SCRAM-SHA-512', KAFKA_SASL_USERNAME: 'u', KAFKA_SASL_PASSWORD: 'p' });
    assert.deepEqual(both, { ssl: { ca: ['CA-PEM'] }, sasl: { mechanism: 'scram-sha-512', username: 'u', password: 'p' } });
  });

  it('describes the settings without a secret', () => {
    const text = JSON.stringify(describeKafkaSecurity({ KAFKA_SECURITY_PROTOCOL: 'SASL_SSL', KAFKA_SSL_CA_FILE: ca, KAFKA_SSL_KEY_FILE: { path: 'k', pem: 'KEY-BODY' }, KAFKA_SSL_KEY_PASSWORD: 'kp-secret', KAFKA_SASL_MECHANISM: 'PLAIN', KAFKA_SASL_USERNAME: 'u', KAFKA_SASL_PASSWORD: 'pw-secret' }));
    assert.doesNotMatch(text, /KEY-BODY|kp-secret|pw-secret/);
    assert.match(text, /"username":"u"/);
  });

  it('createKafka hands them to every connection, over any override', async () => {
    const seen: unknown[] = [];
    const kafka = createKafka({
      brokers: ['b.invalid:9093'], clientId: 't', logger: createLogger({ service: 't', level: 'silent' }),
      security: { KAFKA_SECURITY_PROTOCOL: 'SSL', KAFKA_SSL_CA_FILE: ca },
      overrides: {
        ssl: { rejectUnauthorized: false }, retry: { retries: 0 },
        socketFactory: ({ ssl }) => {
          seen.push(ssl);
          const socket = new Socket();
          setImmediate(() => socket.destroy(new Error('no broker in a unit test')));
          return socket;
        },
      },
    });
    await assert.rejects(kafka.admin().connect());
    assert.deepEqual(seen[0], { ca: ['CA-PEM'] });
  });
});
