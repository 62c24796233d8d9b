// The secured local stack (`npm run stack -- --secure`, `npm start -- --secure`): one SASL_SSL
// listener for clients (SCRAM-SHA-512), the KRaft controller listener on TLS with client
// certificates, KRaft's StandardAuthorizer refusing whatever no ACL allows, two super users for the
// stack's own use (the broker itself, and the admin that creates the ACLs), and one principal per
// program with the grants of packages/platform/src/kafka/acls.ts.
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ACL_ROLES, aclTable, userOf, type AclRole, type PrincipalAcls } from '@switchyard/platform/kafka/acls';
import { createAcls } from '@switchyard/platform/kafka/acl-admin';
import { createKafka } from '@switchyard/platform/kafka/client';
import type { KafkaSecuritySettings } from '@switchyard/platform/kafka/security';
import { createLogger } from '@switchyard/platform/logger';
import { ensureCredentials, writeEnvFile, type Credential } from './credentials.js';
import { formattedClusterId, type BrokerSecurity, type KafkaAddress } from './kafka.js';
import { BROKER_CERT_NAME, makeBrokerTls } from './tls.js';

/** The broker's own principal: inter-broker SASL and its certificate towards the controller listener. */
export const BROKER_USER = BROKER_CERT_NAME;
/** The stack's admin: readiness checks and creating the ACLs. Nothing of Switchyard runs as it. */
export const ADMIN_USER = 'switchyard-admin';
export const SASL_MECHANISM = 'SCRAM-SHA-512' as const;
const SCRAM_LOGIN = 'org.apache.kafka.common.security.scram.ScramLoginModule';

export interface StackSecurity {
  /** Holds tls/, credentials/, env/ and client.env. */
  dir: string;
  caFile: string;
  broker: BrokerSecurity;
  credentials: ReadonlyMap<string, Credential>;
  /** A client's settings as a parsed config holds them (createKafka's `security`): TLS trusting the stack's CA, SASL as user. */
  clientSecurity(user: string): KafkaSecuritySettings;
  /** Java client properties (the registry; Kafka's own tools with --command-config). */
  javaClientProperties(user: string): Record<string, string>;
  /** The variables a Switchyard program reads to connect as user (the password by file). */
  env(user: string, brokers: string): Record<string, string>;
}

/**
 * Fresh TLS material, and the users' credentials (kept from an earlier start of the same storage):
 * the broker, the admin, one user per ACL role, and extraUsers (tests: a principal of their own).
 */
export async function prepareSecurity(dir: string, extraUsers: readonly string[] = []): Promise<StackSecurity> {
  const { caFile, keystoreFile } = await makeBrokerTls(join(dir, 'tls'));
  // The SCRAM users are made when the storage is formatted: a formatted one keeps its passwords.
  const existing = formattedClusterId(join(dir, 'kafka')) !== undefined;
  const credentials = ensureCredentials(join(dir, 'credentials'), [BROKER_USER, ADMIN_USER, ...ACL_ROLES.map(userOf), ...extraUsers], { existing });
  const credential = (user: string) => {
    const found = credentials.get(user);
    if (!found) throw new Error(`no credentials for ${user} in ${join(dir, 'credentials')}`);
    return found;
  };
  const jaas = (user: string) => `${SCRAM_LOGIN} required username="${user}" password="${credential(user).password}";`;
  const clientSecurity = (user: string): KafkaSecuritySettings => ({
    KAFKA_SECURITY_PROTOCOL: 'SASL_SSL',
    KAFKA_SSL_CA_FILE: { path: caFile, pem: readFileSync(caFile, 'utf8') },
    KAFKA_SASL_MECHANISM: SASL_MECHANISM,
    KAFKA_SASL_USERNAME: user,
    KAFKA_SASL_PASSWORD: credential(user).password,
  });
  const broker: BrokerSecurity = {
    properties: ({ port, controllerPort }) => [
      `listeners=CLIENT://127.0.0.1:${port},CONTROLLER://127.0.0.1:${controllerPort}`,
      `advertised.listeners=CLIENT://127.0.0.1:${port}`,
      'listener.security.protocol.map=CLIENT:SASL_SSL,CONTROLLER:SSL',
      'inter.broker.listener.name=CLIENT',
      'controller.listener.names=CONTROLLER',
      `sasl.enabled.mechanisms=${SASL_MECHANISM}`,
      `sasl.mechanism.inter.broker.protocol=${SASL_MECHANISM}`,
      `listener.name.client.scram-sha-512.sasl.jaas.config=${jaas(BROKER_USER)}`,
      'ssl.keystore.type=PEM',
      `ssl.keystore.location=${keystoreFile}`,
      'ssl.truststore.type=PEM',
      `ssl.truststore.location=${caFile}`,
      // Only the broker holds a certificate the CA signed: the controller listener takes no one else.
      'listener.name.controller.ssl.client.auth=required',
      'ssl.principal.mapping.rules=RULE:^CN=([^,]+)$/$1/,DEFAULT',
      'authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer',
      'allow.everyone.if.no.acl.found=false',
      `super.users=User:${BROKER_USER};User:${ADMIN_USER}`,
    ],
    scramUsers: [...credentials.values()],
    client: clientSecurity(ADMIN_USER),
  };
  return {
    dir, caFile, broker, credentials, clientSecurity,
    javaClientProperties: (user) => ({
      'security.protocol': 'SASL_SSL',
      'sasl.mechanism': SASL_MECHANISM,
      'sasl.jaas.config': jaas(user),
      'ssl.truststore.type': 'PEM',
      'ssl.truststore.location': caFile,
    }),
    env: (user, brokers) => ({
      KAFKA_BROKERS: brokers,
      KAFKA_SECURITY_PROTOCOL: 'SASL_SSL',
      KAFKA_SASL_MECHANISM: SASL_MECHANISM,
      KAFKA_SASL_USERNAME: user,
      KAFKA_SASL_PASSWORD_FILE: credential(user).passwordFile,
      KAFKA_SSL_CA_FILE: caFile,
    }),
  };
}

/** Creates the table's ACLs as the stack's admin; returns how many bindings. */
export async function createStackAcls(security: StackSecurity, brokers: string, table: readonly PrincipalAcls[]): Promise<number> {
  const kafka = createKafka({ brokers: brokers.split(','), clientId: 'switchyard-stack-acls', logger: createLogger({ service: 'stack', level: 'silent' }), security: security.broker.client });
  const admin = kafka.admin();
  await admin.connect();
  try {
    return await createAcls(admin, table);
  } finally {
    await admin.disconnect().catch(() => undefined);
  }
}

/** The ACLs of every Switchyard program for a topic prefix (the registry's are made before it starts). */
export const serviceAclTable = (prefix: string): PrincipalAcls[] => aclTable({ prefix }).filter((p) => p.role !== 'registry');
export const registryAclTable = (): PrincipalAcls[] => aclTable({ prefix: '' }).filter((p) => p.role === 'registry');

/** The env file of one role, and client.env (the direct producer's): where they are written. */
export const envFile = (security: StackSecurity, role: AclRole): string => join(security.dir, 'env', `${role}.env`);
export const clientEnvFile = (security: StackSecurity): string => join(security.dir, 'client.env');
export const adminPropertiesFile = (security: StackSecurity): string => join(security.dir, 'admin-client.properties');

/**
 * Writes what a client needs to connect: env/<role>.env for each program (as its own principal),
 * client.env (as switchyard-producer, which may write to the ingest topic and nothing else), and
 * admin-client.properties (the admin, for Kafka's own tools: kafka-acls.sh --command-config). All 0600.
 */
export function writeClientSettings(security: StackSecurity, brokers: string, registryUrl: string, prefix: string): void {
  mkdirSync(join(security.dir, 'env'), { recursive: true, mode: 0o700 });
  const comment = (who: string) => [`Switchyard's local secured stack: how ${who} connects. Load with: set -a; . <this file>; set +a`];
  for (const role of ACL_ROLES) {
    writeEnvFile(envFile(security, role), { ...security.env(userOf(role), brokers), SCHEMA_REGISTRY_URL: registryUrl, SWITCHYARD_TOPIC_PREFIX: prefix }, comment(`the ${role} principal`));
  }
  writeEnvFile(clientEnvFile(security), { ...security.env(userOf('producer'), brokers), SCHEMA_REGISTRY_URL: registryUrl, SWITCHYARD_TOPIC_PREFIX: prefix },
    [...comment('a client'), `As ${userOf('producer')}: may write to ${prefix}ingest, nothing else (switchyard acls --prefix ${prefix}).`]);
  const props = { 'bootstrap.servers': brokers, ...security.javaClientProperties(ADMIN_USER) };
  writeFileSync(adminPropertiesFile(security), `${Object.entries(props).map(([k, v]) => `${k}=${v}`).join('\n')}\n`, { mode: 0o600 });
  chmodSync(adminPropertiesFile(security), 0o600);
}

/** How a client connects, for the console: addresses and file names, never a password. */
export function connectionSummary(security: StackSecurity, brokers: string): string[] {
  return [
    `Kafka: SASL_SSL on ${brokers}, SASL mechanism ${SASL_MECHANISM}, CA ${security.caFile}`,
    `principals: ${ACL_ROLES.map(userOf).join(', ')}; passwords in ${join(security.dir, 'credentials')}/<user>.password (0600)`,
    `client settings: ${clientEnvFile(security)} (user ${userOf('producer')}, password file ${security.credentials.get(userOf('producer'))?.passwordFile}); each program's: ${join(security.dir, 'env')}/<service>.env`,
    `load one with: set -a; . ${clientEnvFile(security)}; set +a    ACLs: npm run switchyard -- acls --prefix <prefix>`,
    `Kafka's own tools as the admin: --command-config ${adminPropertiesFile(security)}`,
  ];
}
