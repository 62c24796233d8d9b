import { Agent as HttpsAgent } from 'node:https';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { SchemaRegistry, SchemaType } from '@kafkajs/confluent-schema-registry';
import type { RegistryConfig } from '../config.js';

/**
 * How the schema registry is reached: its URL, HTTP Basic credentials (Confluent's
 * basic.auth.user.info), and for an https URL the CA its certificate must chain to (unset: Node's
 * default roots). Certificates and host names are always verified.
 */
export interface RegistryConnection {
  /** Confluent-compatible API base, e.g. http://127.0.0.1:8085/apis/ccompat/v7 */
  registryUrl: string;
  registryAuth?: { username: string; password: string };
  /** PEM of the CA certificates (https only). */
  registryCa?: string;
}

/** The connection a parsed config (registryEnv in config.ts) describes. */
export function registryConnection(config: Pick<RegistryConfig, 'SCHEMA_REGISTRY_URL'> & Partial<RegistryConfig>): RegistryConnection {
  return {
    registryUrl: config.SCHEMA_REGISTRY_URL,
    ...(config.SCHEMA_REGISTRY_BASIC_AUTH_USER_INFO ? { registryAuth: config.SCHEMA_REGISTRY_BASIC_AUTH_USER_INFO } : {}),
    ...(config.SCHEMA_REGISTRY_SSL_CA_FILE ? { registryCa: config.SCHEMA_REGISTRY_SSL_CA_FILE.pem } : {}),
  };
}

function isHttps(url: string): boolean {
  return url.toLowerCase().startsWith('https:');
}

/** The https agent of a connection with a CA of its own; undefined otherwise (Node's defaults). */
function httpsAgent(conn: RegistryConnection): HttpsAgent | undefined {
  return isHttps(conn.registryUrl) && conn.registryCa ? new HttpsAgent({ ca: conn.registryCa, keepAlive: true }) : undefined;
}

/** The registry client (@kafkajs/confluent-schema-registry) with the connection's credentials and CA. */
export function createSchemaRegistry(conn: RegistryConnection): { registry: SchemaRegistry; put: (path: string, body: unknown) => Promise<{ status: number; text: string }> } {
  const agent = httpsAgent(conn);
  const registry = new SchemaRegistry(
    { host: conn.registryUrl, ...(conn.registryAuth ? { auth: conn.registryAuth } : {}), ...(agent ? { agent } : {}) },
    { [SchemaType.AVRO]: { logicalTypes: {} } },
  );
  return { registry, put: (path, body) => put(conn, agent, path, body) };
}

/** One PUT to the registry API (what the client library does not expose), with the same credentials and CA. */
function put(conn: RegistryConnection, agent: HttpsAgent | undefined, path: string, body: unknown): Promise<{ status: number; text: string }> {
  const url = new URL(`${conn.registryUrl.replace(/\/$/, '')}${path}`);
  const payload = Buffer.from(JSON.stringify(body));
  const headers: Record<string, string | number> = { 'content-type': 'application/vnd.schemaregistry.v1+json', 'content-length': payload.length };
  if (conn.registryAuth) headers.authorization = `Basic ${Buffer.from(`${conn.registryAuth.username}:${conn.registryAuth.password}`).toString('base64')}`;
  return new Promise((resolve, reject) => {
    const req = (isHttps(url.href) ? httpsRequest : httpRequest)(url, { method: 'PUT', headers, ...(agent ? { agent } : {}), timeout: 10_000 }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`PUT ${url.pathname} timed out`)));
    req.on('error', reject);
    req.end(payload);
  });
}
