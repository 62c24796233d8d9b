/**
 * Why a connection to Kafka or the schema registry failed, and which variable to fix: the one place
 * that reads kafkajs's error classes and protocol error types, Node's TLS and socket error codes,
 * and the registry's HTTP answers. Pure: kafka/failure-watch.ts acts on the verdicts (stop the
 * service, or report on /readyz while retrying), docs/decisions/0015-kafka-security-variables.md
 * says which causes stop a service and why.
 */
import type { KafkaSecuritySettings } from './kafka/security.js';

export type FailureCause =
  /** SASL credentials refused: retrying with the same ones cannot help. */
  | 'credentials'
  /** The broker does not offer the SASL mechanism (or the listener is not SASL). */
  | 'mechanism'
  /** The peer's certificate does not chain to a trusted CA (or expired, or not yet valid). */
  | 'untrusted-certificate'
  /** The certificate is trusted but names another host. */
  | 'hostname-mismatch'
  /** Another TLS failure: a plaintext listener, a client certificate refused, no shared protocol. */
  | 'tls'
  /** Nothing answered (refused, unknown host, timed out, connection closed). */
  | 'unreachable'
  /** The principal lacks an ACL. */
  | 'authorization';

export type ResourceType = 'Topic' | 'Group' | 'TransactionalId' | 'Cluster';

export interface ConnectionFailure {
  target: 'kafka' | 'registry';
  cause: FailureCause;
  /** Node's error code, kafkajs's protocol error type, or `HTTP <status>`. */
  code: string;
  /** Retrying cannot help: the service stops (everything but `unreachable`). */
  fatal: boolean;
  /** `host:port` of the broker, when known. */
  broker?: string;
  /** Of an authorization failure. */
  resourceType?: ResourceType;
}

/** Node's certificate verification codes that mean "not trusted" (OpenSSL's X509_V_ERR_* names). */
const UNTRUSTED = new Set([
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE', 'SELF_SIGNED_CERT_IN_CHAIN', 'DEPTH_ZERO_SELF_SIGNED_CERT', 'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY', 'CERT_HAS_EXPIRED', 'CERT_NOT_YET_VALID', 'CERT_UNTRUSTED', 'CERT_REJECTED',
  'CERT_SIGNATURE_FAILURE', 'UNABLE_TO_DECRYPT_CERT_SIGNATURE', 'INVALID_CA', 'CERT_CHAIN_TOO_LONG',
]);
const HOSTNAME = new Set(['ERR_TLS_CERT_ALTNAME_INVALID']);
const UNREACHABLE = new Set(['ECONNREFUSED', 'ENOTFOUND', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ECONNRESET', 'EAI_AGAIN', 'EPIPE']);

/**
 * kafkajs's Connection logs a socket error by its message only ("Connection error: <message>"), so
 * the codes are recovered from Node's and OpenSSL's messages, which are stable.
 */
const MESSAGE_CODES: Array<[RegExp, string]> = [
  [/unable to verify the first certificate/i, 'UNABLE_TO_VERIFY_LEAF_SIGNATURE'],
  [/self[- ]signed certificate in certificate chain/i, 'SELF_SIGNED_CERT_IN_CHAIN'],
  [/self[- ]signed certificate/i, 'DEPTH_ZERO_SELF_SIGNED_CERT'],
  [/unable to get local issuer certificate/i, 'UNABLE_TO_GET_ISSUER_CERT_LOCALLY'],
  [/unable to get issuer certificate/i, 'UNABLE_TO_GET_ISSUER_CERT'],
  [/certificate has expired/i, 'CERT_HAS_EXPIRED'],
  [/certificate is not yet valid/i, 'CERT_NOT_YET_VALID'],
  [/Hostname\/IP does not match certificate's altnames/i, 'ERR_TLS_CERT_ALTNAME_INVALID'],
  [/wrong version number|packet length too long|unknown protocol/i, 'ERR_SSL_WRONG_VERSION_NUMBER'],
  [/alert (bad certificate|certificate required|unknown ca|handshake failure)/i, 'ERR_SSL_ALERT'],
  [/\b(ECONNREFUSED|ENOTFOUND|ETIMEDOUT|EHOSTUNREACH|ENETUNREACH|ECONNRESET|EAI_AGAIN|EPIPE)\b/, '$1'],
  [/^(Connection error: )?Connection timeout$/i, 'ETIMEDOUT'],
  [/Closed connection|Connection closed by the server/i, 'CONNECTION_CLOSED'],
];

const AUTHORIZATION_TYPES: Record<string, ResourceType> = {
  TOPIC_AUTHORIZATION_FAILED: 'Topic',
  GROUP_AUTHORIZATION_FAILED: 'Group',
  TRANSACTIONAL_ID_AUTHORIZATION_FAILED: 'TransactionalId',
  CLUSTER_AUTHORIZATION_FAILED: 'Cluster',
};
/** kafkajs's messages of those types (protocol/error.js), for log lines that carry only the message. */
const AUTHORIZATION_MESSAGES: Array<[RegExp, string]> = [
  [/Not authorized to access topics/i, 'TOPIC_AUTHORIZATION_FAILED'],
  [/Not authorized to access group/i, 'GROUP_AUTHORIZATION_FAILED'],
  [/Transactional Id authorization failed/i, 'TRANSACTIONAL_ID_AUTHORIZATION_FAILED'],
  [/Cluster authorization failed/i, 'CLUSTER_AUTHORIZATION_FAILED'],
];

interface ErrorLike { name?: unknown; message?: unknown; code?: unknown; type?: unknown; broker?: unknown; cause?: unknown; originalError?: unknown; errors?: unknown }

/** The error and what it wraps: kafkajs's retries-exceeded and aggregate errors, `cause` chains. */
function chain(err: unknown): ErrorLike[] {
  const out: ErrorLike[] = [];
  const visit = (e: unknown, depth: number) => {
    if (!e || typeof e !== 'object' || depth > 6 || out.includes(e as ErrorLike)) return;
    const x = e as ErrorLike;
    out.push(x);
    visit(x.cause, depth + 1);
    visit(x.originalError, depth + 1);
    if (Array.isArray(x.errors)) for (const inner of x.errors) visit(inner, depth + 1);
  };
  visit(err, 0);
  return out;
}

function codeOfMessage(message: string): string | undefined {
  for (const [pattern, code] of MESSAGE_CODES) {
    const m = pattern.exec(message);
    if (m) return code === '$1' ? m[1] : code;
  }
  return undefined;
}

function fromCode(code: string, target: ConnectionFailure['target'], broker: string | undefined): ConnectionFailure | undefined {
  const at = broker ? { broker } : {};
  if (UNTRUSTED.has(code)) return { target, cause: 'untrusted-certificate', code, fatal: true, ...at };
  if (HOSTNAME.has(code)) return { target, cause: 'hostname-mismatch', code, fatal: true, ...at };
  if (code.startsWith('ERR_SSL_') || code === 'EPROTO') return { target, cause: 'tls', code, fatal: true, ...at };
  if (UNREACHABLE.has(code) || code === 'CONNECTION_CLOSED') return { target, cause: 'unreachable', code, fatal: false, ...at };
  return undefined;
}

function fromKafkaText(text: string, broker: string | undefined): ConnectionFailure | undefined {
  const at = broker ? { broker } : {};
  if (/^SASL .*mechanism is not supported/i.test(text)) return { target: 'kafka', cause: 'mechanism', code: 'UNSUPPORTED_SASL_MECHANISM', fatal: true, ...at };
  if (/^SASL .*(authentication failed|invalid username or password)/i.test(text)) return { target: 'kafka', cause: 'credentials', code: 'SASL_AUTHENTICATION_FAILED', fatal: true, ...at };
  for (const [pattern, type] of AUTHORIZATION_MESSAGES) {
    if (pattern.test(text)) return { target: 'kafka', cause: 'authorization', code: type, fatal: true, resourceType: AUTHORIZATION_TYPES[type]!, ...at };
  }
  const code = codeOfMessage(text);
  return code ? fromCode(code, 'kafka', broker) : undefined;
}

/** The cause of an error a kafkajs client raised, or undefined when it is none of the above. */
export function classifyKafkaError(err: unknown): ConnectionFailure | undefined {
  for (const e of chain(err)) {
    if (isRegistryError(e)) return undefined;
    const broker = typeof e.broker === 'string' ? e.broker : undefined;
    const at = broker ? { broker } : {};
    const type = typeof e.type === 'string' ? e.type : undefined;
    if (type && AUTHORIZATION_TYPES[type]) return { target: 'kafka', cause: 'authorization', code: type, fatal: true, resourceType: AUTHORIZATION_TYPES[type], ...at };
    if (type === 'SASL_AUTHENTICATION_FAILED') return { target: 'kafka', cause: 'credentials', code: type, fatal: true, ...at };
    if (type === 'UNSUPPORTED_SASL_MECHANISM' || type === 'ILLEGAL_SASL_STATE') return { target: 'kafka', cause: 'mechanism', code: type, fatal: true, ...at };
    const message = typeof e.message === 'string' ? e.message : '';
    if (e.name === 'KafkaJSSASLAuthenticationError') {
      return fromKafkaText(message, broker) ?? { target: 'kafka', cause: 'credentials', code: 'SASL_AUTHENTICATION_FAILED', fatal: true, ...at };
    }
    const byCode = typeof e.code === 'string' ? fromCode(e.code, 'kafka', broker) : undefined;
    if (byCode) return byCode;
    const byText = fromKafkaText(message, broker);
    if (byText) return byText;
  }
  return undefined;
}

/** The cause of an error line kafkajs logged (`message`, and `error` for failed responses). */
export function classifyKafkaLog(entry: { message?: unknown; error?: unknown; broker?: unknown }): ConnectionFailure | undefined {
  const broker = typeof entry.broker === 'string' ? entry.broker : undefined;
  for (const text of [entry.error, entry.message]) {
    if (typeof text !== 'string') continue;
    const failure = fromKafkaText(text, broker);
    if (failure) return failure;
  }
  return undefined;
}

/** The registry client's errors (ResponseError, "Confluent_Schema_Registry - ..."). */
export function isRegistryError(err: unknown): boolean {
  const e = err as ErrorLike | undefined;
  return !!e && (e.name === 'ResponseError' || (typeof e.message === 'string' && e.message.startsWith('Confluent_Schema_Registry')));
}

/**
 * The cause of a failed registry call. The client library reports an HTTP answer by its status and
 * a socket or TLS error as status 400 with Node's message; fetch-style errors carry a code.
 */
export function classifyRegistryError(err: unknown): ConnectionFailure | undefined {
  for (const e of chain(err)) {
    const status = (e as { status?: unknown }).status;
    if (status === 401 || status === 403) return { target: 'registry', cause: 'credentials', code: `HTTP ${status}`, fatal: true };
    const byCode = typeof e.code === 'string' ? fromCode(e.code, 'registry', undefined) : undefined;
    if (byCode) return byCode;
    const code = typeof e.message === 'string' ? codeOfMessage(e.message) : undefined;
    const byText = code ? fromCode(code, 'registry', undefined) : undefined;
    if (byText) return byText;
  }
  return undefined;
}

/** What the service was doing, to name the resource and operation of an authorization failure. */
export type Access = Partial<Record<ResourceType, { operation: string; names: readonly string[] }>>;

export interface FailureContext {
  brokers: readonly string[];
  security: KafkaSecuritySettings;
  registryUrl?: string;
  access?: Access;
}

/** The one line a person reads: the cause, and the variable (or the ACL) to fix. Never a secret. */
export function explainFailure(f: ConnectionFailure, ctx: FailureContext): string {
  return f.target === 'registry' ? explainRegistry(f, ctx) : explainKafka(f, ctx);
}

function explainKafka(f: ConnectionFailure, { brokers, security: s, access }: FailureContext): string {
  const broker = f.broker ?? brokers.join(',');
  const protocol = s.KAFKA_SECURITY_PROTOCOL;
  switch (f.cause) {
    case 'credentials':
      return `Kafka refused the SASL credentials (${s.KAFKA_SASL_MECHANISM ?? 'no mechanism'}, user ${s.KAFKA_SASL_USERNAME ?? '(none)'}): check KAFKA_SASL_USERNAME / KAFKA_SASL_PASSWORD`;
    case 'mechanism':
      return `Kafka broker ${broker} does not accept SASL mechanism ${s.KAFKA_SASL_MECHANISM ?? '(none)'} (${f.code}): check KAFKA_SASL_MECHANISM and that KAFKA_SECURITY_PROTOCOL (${protocol}) matches the listener`;
    case 'untrusted-certificate':
      return `the certificate of Kafka broker ${broker} is not trusted (${f.code}): check KAFKA_SSL_CA_FILE (${s.KAFKA_SSL_CA_FILE ? s.KAFKA_SSL_CA_FILE.path : "unset: Node's default roots"})`;
    case 'hostname-mismatch':
      return `the certificate of Kafka broker ${broker} does not name the host it was reached at (${f.code}): check KAFKA_BROKERS against the names in the broker's certificate (and the listener's advertised host)`;
    case 'tls':
      return `TLS with Kafka broker ${broker} failed (${f.code}): check that KAFKA_SECURITY_PROTOCOL (${protocol}) matches the listener, and KAFKA_SSL_CERT_FILE / KAFKA_SSL_KEY_FILE if it asks for a client certificate`;
    case 'unreachable':
      return `cannot reach Kafka broker ${broker} (${f.code}): check KAFKA_BROKERS, and that KAFKA_SECURITY_PROTOCOL (${protocol}) matches the listener`;
    case 'authorization':
      return explainAuthorization(f, s, access);
  }
}

/** Kafka's names for what a principal is: User:<SASL user>, or the TLS client certificate's subject. */
function principalOf(s: KafkaSecuritySettings): string {
  if (s.KAFKA_SASL_USERNAME !== undefined) return `User:${s.KAFKA_SASL_USERNAME}`;
  if (s.KAFKA_SSL_CERT_FILE) return `the principal of KAFKA_SSL_CERT_FILE's certificate`;
  return 'User:ANONYMOUS';
}

const DEFAULT_OPERATION: Record<ResourceType, string> = { Topic: 'Describe', Group: 'Read', TransactionalId: 'Write', Cluster: 'IdempotentWrite' };

function explainAuthorization(f: ConnectionFailure, s: KafkaSecuritySettings, access: Access | undefined): string {
  const type = f.resourceType ?? 'Topic';
  const known = access?.[type];
  const operation = known?.operation ?? DEFAULT_OPERATION[type];
  const names = type === 'Cluster' ? 'kafka-cluster' : known?.names.length ? known.names.join(', ') : '(a resource of this service; see its ACLs)';
  return `Kafka denied ${operation} on ${type} ${names} to ${principalOf(s)} (${f.code}): grant that ACL, or check KAFKA_SASL_USERNAME`;
}

function explainRegistry(f: ConnectionFailure, { registryUrl = 'SCHEMA_REGISTRY_URL' }: FailureContext): string {
  switch (f.cause) {
    case 'credentials':
      return `the schema registry at ${registryUrl} refused the credentials (${f.code}): check SCHEMA_REGISTRY_BASIC_AUTH_USER_INFO`;
    case 'untrusted-certificate':
      return `the certificate of the schema registry at ${registryUrl} is not trusted (${f.code}): check SCHEMA_REGISTRY_SSL_CA_FILE`;
    case 'hostname-mismatch':
      return `the certificate of the schema registry does not name the host of ${registryUrl} (${f.code}): check SCHEMA_REGISTRY_URL`;
    case 'tls':
      return `TLS with the schema registry at ${registryUrl} failed (${f.code}): check SCHEMA_REGISTRY_URL (http or https) and SCHEMA_REGISTRY_SSL_CA_FILE`;
    default:
      return `cannot reach the schema registry at ${registryUrl} (${f.code}): check SCHEMA_REGISTRY_URL`;
  }
}
