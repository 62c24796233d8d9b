import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { z } from 'zod';
import { ConfigError } from './errors.js';
import { commonEnv, loadConfig, type Env } from './config.js';

const schema = z.object({ ...commonEnv, SWITCHYARD_ADMIN_TOKEN: z.string().min(16).optional() });
const dir = mkdtempSync(join(tmpdir(), 'switchyard-config-'));
const PEM = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';
function file(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}
const ca = file('ca.pem', PEM);
const cert = file('client.pem', PEM);
const key = file('client.key', '-----BEGIN PRIVATE KEY-----\nsecret-key-body\n-----END PRIVATE KEY-----\n');

function problems(env: Env): string[] {
  try { loadConfig(schema, env); } catch (err) { if (err instanceof ConfigError) return [...err.problems]; throw err; }
  return [];
}

describe('loadConfig: Kafka security', () => {
  it('defaults to PLAINTEXT with nothing else set', () => {
    const config = loadConfig(schema, {});
    assert.equal(config.KAFKA_SECURITY_PROTOCOL, 'PLAINTEXT');
    assert.equal(config.KAFKA_SASL_MECHANISM, undefined);
    assert.equal(config.SCHEMA_REGISTRY_BASIC_AUTH_USER_INFO, undefined);
  });

  it('reads SASL_SSL with a CA, a client certificate and SCRAM credentials', () => {
    const config = loadConfig(schema, {
      KAFKA_SECURITY_PROTOCOL: 'SASL_SSL', KAFKA_SSL_CA_FILE: ca, KAFKA_SSL_CERT_FILE: cert, KAFKA_SSL_KEY_FILE: key, KAFKA_SSL_KEY_PASSWORD: 'kp',
      KAFKA_SASL_MECHANISM: 'SCRAM-SHA-512', KAFKA_SASL_USERNAME: 'switchyard-ingest', KAFKA_SASL_PASSWORD: 'pw',
    });
    assert.deepEqual(config.KAFKA_SSL_CA_FILE, { path: ca, pem: PEM });
    assert.equal(config.KAFKA_SSL_KEY_FILE?.path, key);
    assert.equal(config.KAFKA_SASL_MECHANISM, 'SCRAM-SHA-512');
  });

  it('refuses unknown protocols and mechanisms by Kafka\'s names', () => {
    const found = problems({ KAFKA_SECURITY_PROTOCOL: 'TLS', KAFKA_SASL_MECHANISM: 'scram-sha-512' });
    assert.ok(found.some((p) => p.startsWith('KAFKA_SECURITY_PROTOCOL:') && p.includes('"TLS"')), found.join('\n'));
    assert.ok(found.some((p) => p.startsWith('KAFKA_SASL_MECHANISM:')), found.join('\n'));
  });

  it('names every missing SASL variable of a SASL protocol, and every SASL variable without one', () => {
    assert.deepEqual(problems({ KAFKA_SECURITY_PROTOCOL: 'SASL_PLAINTEXT' }).map((p) => p.split(':')[0]).sort(), ['KAFKA_SASL_MECHANISM', 'KAFKA_SASL_PASSWORD', 'KAFKA_SASL_USERNAME']);
    const found = problems({ KAFKA_SASL_MECHANISM: 'PLAIN', KAFKA_SASL_USERNAME: 'u', KAFKA_SASL_PASSWORD: 'p' });
    assert.equal(found.length, 3);
    assert.match(found[0]!, /KAFKA_SECURITY_PROTOCOL is PLAINTEXT; SASL needs SASL_PLAINTEXT or SASL_SSL/);
  });

  it('refuses TLS files without a TLS protocol, a certificate without its key and the other way round', () => {
    assert.match(problems({ KAFKA_SSL_CA_FILE: ca }).join('\n'), /KAFKA_SSL_CA_FILE: set, but KAFKA_SECURITY_PROTOCOL is PLAINTEXT/);
    assert.match(problems({ KAFKA_SECURITY_PROTOCOL: 'SSL', KAFKA_SSL_CERT_FILE: cert }).join('\n'), /KAFKA_SSL_KEY_FILE: required with KAFKA_SSL_CERT_FILE/);
    assert.match(problems({ KAFKA_SECURITY_PROTOCOL: 'SSL', KAFKA_SSL_KEY_FILE: key }).join('\n'), /KAFKA_SSL_CERT_FILE: required with KAFKA_SSL_KEY_FILE/);
    assert.match(problems({ KAFKA_SECURITY_PROTOCOL: 'SSL', KAFKA_SSL_KEY_PASSWORD: 'x' }).join('\n'), /KAFKA_SSL_KEY_PASSWORD: set, but KAFKA_SSL_KEY_FILE is not/);
  });

  it('names a PEM file that cannot be read or holds no PEM, showing the path', () => {
    const found = problems({ KAFKA_SECURITY_PROTOCOL: 'SSL', KAFKA_SSL_CA_FILE: join(dir, 'missing.pem'), SCHEMA_REGISTRY_URL: 'https://r:8081', SCHEMA_REGISTRY_SSL_CA_FILE: file('not-pem.txt', 'hello') });
    assert.match(found.join('\n'), /KAFKA_SSL_CA_FILE: cannot read the file \(ENOENT\) \(".*missing\.pem"\)/);
    assert.match(found.join('\n'), /SCHEMA_REGISTRY_SSL_CA_FILE: the file holds no PEM block/);
  });

  it('reports every problem at once, field and cross-variable ones together', () => {
    const found = problems({ KAFKA_BROKERS: 'no-port', KAFKA_SECURITY_PROTOCOL: 'SASL_SSL', KAFKA_SASL_MECHANISM: 'PLAIN', KAFKA_SASL_USERNAME: 'u' });
    assert.deepEqual(found.map((p) => p.split(':')[0]).sort(), ['KAFKA_BROKERS', 'KAFKA_SASL_PASSWORD']);
  });
});

describe('loadConfig: the registry', () => {
  it('splits basic.auth.user.info at the first colon (a password may hold colons)', () => {
    const config = loadConfig(schema, { SCHEMA_REGISTRY_BASIC_AUTH_USER_INFO: 'reg-user:pa:ss' });
    assert.deepEqual(config.SCHEMA_REGISTRY_BASIC_AUTH_USER_INFO, { username: 'reg-user', password: 'pa:ss' });
  });

  it('refuses user info without a colon, without echoing it, and a CA for an http registry', () => {
    const found = problems({ SCHEMA_REGISTRY_BASIC_AUTH_USER_INFO: 'just-a-secret', SCHEMA_REGISTRY_SSL_CA_FILE: ca });
    assert.match(found.join('\n'), /SCHEMA_REGISTRY_BASIC_AUTH_USER_INFO: expected username:password \(set\)/);
    assert.doesNotMatch(found.join('\n'), /just-a-secret/);
    assert.match(found.join('\n'), /SCHEMA_REGISTRY_SSL_CA_FILE: set, but SCHEMA_REGISTRY_URL is not https/);
  });
});

describe('loadConfig: <NAME>_FILE', () => {
  it('reads a secret from its file, trimming one trailing newline', () => {
    const config = loadConfig(schema, {
      KAFKA_SECURITY_PROTOCOL: 'SASL_PLAINTEXT', KAFKA_SASL_MECHANISM: 'PLAIN', KAFKA_SASL_USERNAME: 'u',
      KAFKA_SASL_PASSWORD_FILE: file('sasl-password', 'from-a-file\n'),
      SCHEMA_REGISTRY_BASIC_AUTH_USER_INFO_FILE: file('user-info', 'reg:secret\r\n'),
      SWITCHYARD_ADMIN_TOKEN_FILE: file('token', 'a-token-of-twenty-chars\n\n'),
    });
    assert.equal(config.KAFKA_SASL_PASSWORD, 'from-a-file');
    assert.deepEqual(config.SCHEMA_REGISTRY_BASIC_AUTH_USER_INFO, { username: 'reg', password: 'secret' });
    assert.equal(config.SWITCHYARD_ADMIN_TOKEN, 'a-token-of-twenty-chars\n', 'only one newline is trimmed');
  });

  it('refuses a variable set both ways, and names an unreadable file by its variable', () => {
    const found = problems({ KAFKA_SSL_KEY_PASSWORD: 'direct', KAFKA_SSL_KEY_PASSWORD_FILE: file('kp', 'filed'), KAFKA_SASL_PASSWORD_FILE: join(dir, 'nope') });
    assert.ok(found.includes('KAFKA_SSL_KEY_PASSWORD: set both KAFKA_SSL_KEY_PASSWORD and KAFKA_SSL_KEY_PASSWORD_FILE; set one of them'), found.join('\n'));
    assert.ok(found.some((p) => /^KAFKA_SASL_PASSWORD_FILE: cannot read ".*nope" \(ENOENT\)$/.test(p)), found.join('\n'));
    assert.doesNotMatch(found.join('\n'), /direct|filed/);
  });

  it('never shows a secret read from a file when it is invalid', () => {
    const found = problems({ SWITCHYARD_ADMIN_TOKEN_FILE: file('short-token', 'short-secret\n') });
    assert.match(found.join('\n'), /SWITCHYARD_ADMIN_TOKEN: .*\(set\)/);
    assert.doesNotMatch(found.join('\n'), /short-secret/);
  });

  it('ignores _FILE variables of names the schema does not read', () => {
    assert.deepEqual(problems({ OTHER_SERVICE_SECRET_FILE: join(dir, 'absent') }), []);
  });
});
