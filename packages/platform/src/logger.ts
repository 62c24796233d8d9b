import { pino, type Logger, type LoggerOptions } from 'pino';

export type { Logger };

/**
 * Paths whose values never reach a log line. Constants compiled once at logger creation; any
 * object logged under these keys (at the top level or one level down) is censored.
 */
export const REDACTED_PATHS: readonly string[] = [
  'sharedSecret', '*.sharedSecret', '*.*.sharedSecret',
  'writeKey', '*.writeKey', 'writeKeys', '*.writeKeys', '*.*.writeKeys',
  'token', '*.token', 'adminToken', '*.adminToken',
  'password', '*.password',
  'authorization', '*.authorization', 'req.headers.authorization', 'req.headers.cookie',
  'headers.authorization', '*.headers.authorization', 'headers["x-signature"]', '*.headers["x-signature"]',
  // Standard Webhooks secrets (a destination record's signingSecrets, a rotation's answer) and signatures.
  'signingSecrets', '*.signingSecrets', '*.*.signingSecrets', 'secret', '*.secret', '*.*.secret',
  'headers["webhook-signature"]', '*.headers["webhook-signature"]',
  // A webhook's client certificate (its private key): alone, in a webhooks list (a destination
  // record, a request's settings) or in undici's connect options.
  'clientCertificate', '*.clientCertificate', 'webhooks[*].clientCertificate', '*.webhooks[*].clientCertificate',
  '*.*.webhooks[*].clientCertificate', '*.*.*.webhooks[*].clientCertificate', 'connect.key', '*.connect.key',
  // Kafka and registry credentials: kafkajs's sasl/ssl options, the registry's Basic auth, and the
  // variables that hold them (config.ts) should a config object ever be logged.
  '*.*.password', 'passphrase', '*.passphrase', '*.*.passphrase',
  'sasl', '*.sasl', 'ssl.key', '*.ssl.key',
  'auth', '*.auth', 'registryAuth', '*.registryAuth',
  'KAFKA_SASL_PASSWORD', '*.KAFKA_SASL_PASSWORD', 'KAFKA_SSL_KEY_PASSWORD', '*.KAFKA_SSL_KEY_PASSWORD',
  'KAFKA_SSL_KEY_FILE.pem', '*.KAFKA_SSL_KEY_FILE.pem',
  'SCHEMA_REGISTRY_BASIC_AUTH_USER_INFO', '*.SCHEMA_REGISTRY_BASIC_AUTH_USER_INFO',
];

export interface LoggerSettings {
  service: string;
  level?: LoggerOptions['level'];
  /** For tests: where lines go (default stdout). */
  destination?: pino.DestinationStream;
}

/** The one root logger of a process; components take children (`logger.child({ component })`). */
export function createLogger({ service, level = 'info', destination }: LoggerSettings): Logger {
  const options: LoggerOptions = {
    level,
    base: { service },
    redact: { paths: [...REDACTED_PATHS], censor: '[redacted]' },
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label) => ({ level: label }) },
  };
  return destination ? pino(options, destination) : pino(options);
}
