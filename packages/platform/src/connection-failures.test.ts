import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { classifyKafkaError, classifyKafkaLog, classifyRegistryError, explainFailure, type ConnectionFailure, type FailureContext } from './connection-failures.js';

/** Errors shaped as kafkajs 2.2.4 makes them (src/errors.js), without importing kafkajs. */
function kafkaError(name: string, message: string, extra: Record<string, unknown> = {}): Error {
  return Object.assign(new Error(message), { name, ...extra });
}
const retriesExceeded = (cause: Error) => kafkaError('KafkaJSNumberOfRetriesExceeded', cause.message, { cause, retriable: false });
const connectionError = (message: string, code?: string) => kafkaError('KafkaJSConnectionError', `Connection error: ${message}`, { broker: 'kafka-1:9093', code });
const protocolError = (type: string, message: string) => kafkaError('KafkaJSProtocolError', message, { type, code: 0, retriable: false });

const ctx: FailureContext = {
  brokers: ['kafka-1:9093'],
  security: { KAFKA_SECURITY_PROTOCOL: 'SASL_SSL', KAFKA_SASL_MECHANISM: 'SCRAM-SHA-512', KAFKA_SASL_USERNAME: 'switchyard-ingest', KAFKA_SASL_PASSWORD: 'pw-never-shown', KAFKA_SSL_CA_FILE: { path: '/etc/switchyard/ca.pem', pem: 'PEM' } },
  registryUrl: 'https://registry:8081',
};

describe('classifyKafkaError', () => {
  const cases: Array<[string, unknown, Partial<ConnectionFailure> | undefined]> = [
    ['SCRAM credentials refused', kafkaError('KafkaJSSASLAuthenticationError', 'SASL SCRAM SHA512 authentication failed: Authentication failed during authentication due to invalid credentials with SASL mechanism SCRAM-SHA-512'), { cause: 'credentials', fatal: true }],
    ['PLAIN credentials refused', kafkaError('KafkaJSSASLAuthenticationError', 'SASL PLAIN authentication failed: Authentication failed: Invalid username or password'), { cause: 'credentials' }],
    ['the protocol error SASL_AUTHENTICATION_FAILED', protocolError('SASL_AUTHENTICATION_FAILED', 'SASL Authentication failed'), { cause: 'credentials', code: 'SASL_AUTHENTICATION_FAILED' }],
    ['a mechanism the broker does not offer', kafkaError('KafkaJSSASLAuthenticationError', 'SASL SCRAM-SHA-512 mechanism is not supported by the server'), { cause: 'mechanism', code: 'UNSUPPORTED_SASL_MECHANISM' }],
    ['UNSUPPORTED_SASL_MECHANISM', protocolError('UNSUPPORTED_SASL_MECHANISM', 'The broker does not support the requested SASL mechanism'), { cause: 'mechanism' }],
    ['an untrusted leaf', connectionError('unable to verify the first certificate', 'UNABLE_TO_VERIFY_LEAF_SIGNATURE'), { cause: 'untrusted-certificate', code: 'UNABLE_TO_VERIFY_LEAF_SIGNATURE', broker: 'kafka-1:9093', fatal: true }],
    ['a self-signed CA in the chain, after the retries', retriesExceeded(connectionError('self-signed certificate in certificate chain', 'SELF_SIGNED_CERT_IN_CHAIN')), { cause: 'untrusted-certificate', code: 'SELF_SIGNED_CERT_IN_CHAIN' }],
    ['a self-signed leaf', connectionError('self-signed certificate', 'DEPTH_ZERO_SELF_SIGNED_CERT'), { cause: 'untrusted-certificate', code: 'DEPTH_ZERO_SELF_SIGNED_CERT' }],
    ['an expired certificate', connectionError('certificate has expired', 'CERT_HAS_EXPIRED'), { cause: 'untrusted-certificate' }],
    ['a certificate for another host', connectionError("Hostname/IP does not match certificate's altnames: Host: kafka-1. is not in the cert's altnames: DNS:localhost", 'ERR_TLS_CERT_ALTNAME_INVALID'), { cause: 'hostname-mismatch', code: 'ERR_TLS_CERT_ALTNAME_INVALID', fatal: true }],
    ['TLS to a plaintext listener', connectionError('write EPROTO 1:error:0A00010B:SSL routines:ssl3_get_record:wrong version number', 'EPROTO'), { cause: 'tls', fatal: true }],
    ['a refused connection', connectionError('connect ECONNREFUSED 10.0.0.1:9093', 'ECONNREFUSED'), { cause: 'unreachable', code: 'ECONNREFUSED', fatal: false }],
    ['an unknown host', retriesExceeded(connectionError('getaddrinfo ENOTFOUND kafka-1', 'ENOTFOUND')), { cause: 'unreachable', code: 'ENOTFOUND' }],
    ['a socket timeout', connectionError('connect ETIMEDOUT 10.0.0.1:9093', 'ETIMEDOUT'), { cause: 'unreachable', code: 'ETIMEDOUT' }],
    ["kafkajs's connection timeout", kafkaError('KafkaJSConnectionError', 'Connection timeout', { broker: 'kafka-1:9093' }), { cause: 'unreachable', code: 'ETIMEDOUT' }],
    ['a topic ACL missing', protocolError('TOPIC_AUTHORIZATION_FAILED', 'Not authorized to access topics: [Topic authorization failed]'), { cause: 'authorization', resourceType: 'Topic', fatal: true }],
    ['a group ACL missing, inside an aggregate', Object.assign(new Error('agg'), { name: 'KafkaJSAggregateError', errors: [protocolError('GROUP_AUTHORIZATION_FAILED', 'Not authorized to access group: Group authorization failed')] }), { cause: 'authorization', resourceType: 'Group' }],
    ['a transactional id ACL missing', retriesExceeded(protocolError('TRANSACTIONAL_ID_AUTHORIZATION_FAILED', 'Transactional Id authorization failed')), { cause: 'authorization', resourceType: 'TransactionalId' }],
    ['a cluster ACL missing', protocolError('CLUSTER_AUTHORIZATION_FAILED', 'Cluster authorization failed'), { cause: 'authorization', resourceType: 'Cluster' }],
    ['something else', protocolError('UNKNOWN_TOPIC_OR_PARTITION', 'This server does not host this topic-partition'), undefined],
    ['not an error at all', 'boom', undefined],
  ];
  for (const [what, err, expected] of cases) {
    it(`${what} → ${expected?.cause ?? 'none'}`, () => {
      const got = classifyKafkaError(err);
      if (!expected) { assert.equal(got, undefined); return; }
      assert.ok(got, 'classified');
      for (const [k, v] of Object.entries(expected)) assert.equal(got[k as keyof ConnectionFailure], v, k);
    });
  }
});

describe('classifyKafkaLog: the lines kafkajs logs (message only, no code)', () => {
  it('recognises TLS, SASL, authorization and reachability from the text', () => {
    assert.equal(classifyKafkaLog({ message: 'Connection error: self-signed certificate in certificate chain', broker: 'b:1' })?.code, 'SELF_SIGNED_CERT_IN_CHAIN');
    assert.equal(classifyKafkaLog({ message: 'Connection error: unable to get local issuer certificate' })?.cause, 'untrusted-certificate');
    assert.equal(classifyKafkaLog({ message: 'SASL SCRAM SHA512 authentication failed: Authentication failed during authentication due to invalid credentials' })?.cause, 'credentials');
    assert.equal(classifyKafkaLog({ message: 'Response Metadata(key: 3, version: 6)', error: 'Not authorized to access topics: [Topic authorization failed]' })?.resourceType, 'Topic');
    assert.equal(classifyKafkaLog({ message: 'Connection error: connect ECONNREFUSED 127.0.0.1:9093' })?.code, 'ECONNREFUSED');
    assert.equal(classifyKafkaLog({ message: 'Crash: KafkaJSNumberOfRetriesExceeded: Not authorized to access group: Group authorization failed' })?.resourceType, 'Group');
    assert.equal(classifyKafkaLog({ message: 'Restarting the consumer in 1000ms' }), undefined);
  });
});

describe('classifyRegistryError', () => {
  const responseError = (status: number, message: string) => Object.assign(new Error(`Confluent_Schema_Registry - ${message}`), { name: 'ResponseError', status });
  it('401/403 are credentials; a TLS or socket failure reported as status 400 is read from its message', () => {
    assert.equal(classifyRegistryError(responseError(401, 'Unauthorized'))?.cause, 'credentials');
    assert.equal(classifyRegistryError(responseError(403, 'Forbidden'))?.code, 'HTTP 403');
    assert.equal(classifyRegistryError(responseError(400, 'Error, status 400: unable to verify the first certificate'))?.cause, 'untrusted-certificate');
    assert.equal(classifyRegistryError(responseError(400, 'Error, status 400: connect ECONNREFUSED 127.0.0.1:1'))?.cause, 'unreachable');
    assert.equal(classifyRegistryError(Object.assign(new Error('x'), { code: 'ERR_TLS_CERT_ALTNAME_INVALID' }))?.cause, 'hostname-mismatch');
    assert.equal(classifyRegistryError(responseError(409, 'Schema being registered is incompatible')), undefined);
  });
});

describe('explainFailure: one line naming the cause and the variable to fix, never a secret', () => {
  const explain = (err: unknown, access?: FailureContext['access']) => explainFailure(classifyKafkaError(err)!, { ...ctx, ...(access ? { access } : {}) });
  it('names the variables of each cause', () => {
    assert.equal(explain(kafkaError('KafkaJSSASLAuthenticationError', 'SASL SCRAM SHA512 authentication failed: x')),
      'Kafka refused the SASL credentials (SCRAM-SHA-512, user switchyard-ingest): check KAFKA_SASL_USERNAME / KAFKA_SASL_PASSWORD');
    assert.match(explain(connectionError('self-signed certificate in certificate chain', 'SELF_SIGNED_CERT_IN_CHAIN')), /kafka-1:9093 is not trusted \(SELF_SIGNED_CERT_IN_CHAIN\): check KAFKA_SSL_CA_FILE \(\/etc\/switchyard\/ca\.pem\)/);
    assert.match(explain(connectionError('x', 'ERR_TLS_CERT_ALTNAME_INVALID')), /check KAFKA_BROKERS/);
    assert.match(explain(connectionError('connect ECONNREFUSED', 'ECONNREFUSED')), /^cannot reach Kafka broker kafka-1:9093 \(ECONNREFUSED\): check KAFKA_BROKERS/);
    assert.match(explain(connectionError('x', 'EPROTO')), /check that KAFKA_SECURITY_PROTOCOL \(SASL_SSL\) matches the listener/);
  });

  it('names the resource type, name and operation of a missing ACL when the context knows them', () => {
    const denied = protocolError('GROUP_AUTHORIZATION_FAILED', 'Not authorized to access group: Group authorization failed');
    assert.equal(explain(denied, { Group: { operation: 'Read', names: ['switchyard.fanout'] } }),
      'Kafka denied Read on Group switchyard.fanout to User:switchyard-ingest (GROUP_AUTHORIZATION_FAILED): grant that ACL, or check KAFKA_SASL_USERNAME');
    assert.match(explain(protocolError('CLUSTER_AUTHORIZATION_FAILED', 'Cluster authorization failed')), /IdempotentWrite on Cluster kafka-cluster/);
    assert.match(explain(protocolError('TOPIC_AUTHORIZATION_FAILED', 'x')), /Describe on Topic \(a resource of this service/);
  });

  it('explains registry failures by their variables', () => {
    const f = classifyRegistryError(Object.assign(new Error('Confluent_Schema_Registry - Unauthorized'), { status: 401 }))!;
    assert.equal(explainFailure(f, ctx), 'the schema registry at https://registry:8081 refused the credentials (HTTP 401): check SCHEMA_REGISTRY_BASIC_AUTH_USER_INFO');
  });

  it('never contains the password', () => {
    for (const err of [kafkaError('KafkaJSSASLAuthenticationError', 'SASL PLAIN authentication failed'), connectionError('x', 'ECONNREFUSED'), protocolError('TOPIC_AUTHORIZATION_FAILED', 'x')]) {
      assert.doesNotMatch(explain(err), /pw-never-shown/);
    }
  });
});
