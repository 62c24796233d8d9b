import type { ConnectionOptions } from 'node:tls';
import type { KafkaSecurityConfig } from '../config.js';
import type { SASLOptions } from '../kafkajs/index.js';

/**
 * KAFKA_SECURITY_PROTOCOL and its companions (config.ts, kafkaSecurityEnv) as kafkajs's `ssl` and
 * `sasl` options: the one place they are translated, used by createKafka for every client.
 * Hostname verification is Node's and always on: kafkajs connects with `tls.connect` and the
 * broker's host as servername, and nothing here (or anywhere) sets `rejectUnauthorized: false`.
 */
export interface KafkaSecurityOptions {
  ssl?: ConnectionOptions | true;
  sasl?: SASLOptions;
}

/** The settings as they appear in a parsed config; every field but the protocol optional. */
export type KafkaSecuritySettings = Partial<KafkaSecurityConfig> & Pick<KafkaSecurityConfig, 'KAFKA_SECURITY_PROTOCOL'>;

export const PLAINTEXT: KafkaSecuritySettings = { KAFKA_SECURITY_PROTOCOL: 'PLAINTEXT' };

export function kafkaSecurityOptions(settings: KafkaSecuritySettings): KafkaSecurityOptions {
  const protocol = settings.KAFKA_SECURITY_PROTOCOL;
  const options: KafkaSecurityOptions = {};
  if (protocol === 'SSL' || protocol === 'SASL_SSL') options.ssl = tlsOptions(settings);
  if (protocol === 'SASL_PLAINTEXT' || protocol === 'SASL_SSL') options.sasl = saslOptions(settings);
  return options;
}

function tlsOptions(s: KafkaSecuritySettings): ConnectionOptions | true {
  const tls: ConnectionOptions = {};
  if (s.KAFKA_SSL_CA_FILE) tls.ca = [s.KAFKA_SSL_CA_FILE.pem];
  if (s.KAFKA_SSL_CERT_FILE) tls.cert = s.KAFKA_SSL_CERT_FILE.pem;
  if (s.KAFKA_SSL_KEY_FILE) tls.key = s.KAFKA_SSL_KEY_FILE.pem;
  if (s.KAFKA_SSL_KEY_PASSWORD !== undefined) tls.passphrase = s.KAFKA_SSL_KEY_PASSWORD;
  return Object.keys(tls).length > 0 ? tls : true;
}

function saslOptions(s: KafkaSecuritySettings): SASLOptions {
  // loadConfig has refused a SASL protocol without all three (config.ts, CROSS_RULES).
  const { KAFKA_SASL_MECHANISM: mechanism, KAFKA_SASL_USERNAME: username, KAFKA_SASL_PASSWORD: password } = s;
  if (!mechanism || username === undefined || password === undefined) throw new Error('SASL needs KAFKA_SASL_MECHANISM, KAFKA_SASL_USERNAME and KAFKA_SASL_PASSWORD');
  switch (mechanism) {
    case 'PLAIN': return { mechanism: 'plain', username, password };
    case 'SCRAM-SHA-256': return { mechanism: 'scram-sha-256', username, password };
    case 'SCRAM-SHA-512': return { mechanism: 'scram-sha-512', username, password };
  }
}

/** What a log line or error message may say about how a client connects: never a secret. */
export function describeKafkaSecurity(s: KafkaSecuritySettings): { protocol: string; mechanism?: string; username?: string; ca?: string; clientCertificate?: string } {
  return {
    protocol: s.KAFKA_SECURITY_PROTOCOL,
    ...(s.KAFKA_SASL_MECHANISM ? { mechanism: s.KAFKA_SASL_MECHANISM } : {}),
    ...(s.KAFKA_SASL_USERNAME !== undefined ? { username: s.KAFKA_SASL_USERNAME } : {}),
    ...(s.KAFKA_SSL_CA_FILE ? { ca: s.KAFKA_SSL_CA_FILE.path } : {}),
    ...(s.KAFKA_SSL_CERT_FILE ? { clientCertificate: s.KAFKA_SSL_CERT_FILE.path } : {}),
  };
}
