// The secured stack's material and broker settings, without a broker: credentials kept per stack,
// env files a shell loads, TLS made by openssl, and the listener and authorizer lines.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { ensureCredentials, writeEnvFile } from './credentials.js';
import { serverProperties } from './kafka.js';
import { ADMIN_USER, BROKER_USER, prepareSecurity } from './secure.js';

const dir = mkdtempSync(join(tmpdir(), 'switchyard-secure-unit-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const mode = (f: string) => statSync(f).mode & 0o777;
const props = (text: string) => new Map(text.split('\n').filter((l) => l.includes('=')).map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)] as const));

describe('ensureCredentials', () => {
  it('makes a random password per user in a 0600 file, and keeps it on the next start', () => {
    const first = ensureCredentials(join(dir, 'c1'), ['switchyard-a', 'switchyard-b']);
    const a = first.get('switchyard-a')!;
    assert.match(a.password, /^[\w-]{43}$/);
    assert.notEqual(a.password, first.get('switchyard-b')!.password);
    assert.equal(mode(a.passwordFile), 0o600);
    assert.equal(mode(join(dir, 'c1')), 0o700);
    assert.equal(readFileSync(a.passwordFile, 'utf8'), a.password);
    assert.equal(ensureCredentials(join(dir, 'c1'), ['switchyard-a']).get('switchyard-a')!.password, a.password);
  });

  it('refuses to make a password for storage formatted with an earlier one', () => {
    assert.throws(() => ensureCredentials(join(dir, 'c1'), ['switchyard-a', 'switchyard-new'], { existing: true }), /switchyard-new\.password is missing/);
  });

  it('refuses a user name a JAAS line or --add-scram would misread', () => {
    assert.throws(() => ensureCredentials(join(dir, 'c2'), ['a,b']), /letters, digits/);
  });
});

describe('writeEnvFile', () => {
  it('writes a 0600 file that `set -a; . file` reads back exactly, quoting what needs it', () => {
    const file = join(dir, 'x.env');
    const vars = { PLAIN: '/tmp/a/ca.pem', SPACED: "it's a path with spaces", EMPTY: '' };
    writeEnvFile(file, vars, ['a comment']);
    assert.equal(mode(file), 0o600);
    const out = execFileSync('sh', ['-c', `set -a; . "${file}"; set +a; printf '%s|%s|%s' "$PLAIN" "$SPACED" "$EMPTY"`], { encoding: 'utf8' });
    assert.equal(out, `${vars.PLAIN}|${vars.SPACED}|`);
  });
});

describe('prepareSecurity', () => {
  it('makes a CA and a broker key store, keeps no CA key, and gives the broker SASL_SSL for clients only, TLS for its controller and a deny-by-default authorizer', async () => {
    const security = await prepareSecurity(join(dir, 's'), ['switchyard-extra']);
    assert.equal(mode(join(dir, 's', 'tls', 'broker-keystore.pem')), 0o600);
    assert.throws(() => statSync(join(dir, 's', 'tls', 'ca.key')));
    execFileSync('openssl', ['verify', '-CAfile', security.caFile, join(dir, 's', 'tls', 'broker-keystore.pem')]);
    for (const user of [BROKER_USER, ADMIN_USER, 'switchyard-fanout', 'switchyard-registry', 'switchyard-extra']) assert.ok(security.credentials.has(user), user);

    const p = props(serverProperties({ dir: '/d', port: 19092, controllerPort: 19093, security: security.broker }));
    assert.equal(p.get('listeners'), 'CLIENT://127.0.0.1:19092,CONTROLLER://127.0.0.1:19093');
    assert.equal(p.get('advertised.listeners'), 'CLIENT://127.0.0.1:19092');
    assert.equal(p.get('listener.security.protocol.map'), 'CLIENT:SASL_SSL,CONTROLLER:SSL');
    assert.equal(p.get('sasl.enabled.mechanisms'), 'SCRAM-SHA-512');
    assert.equal(p.get('listener.name.controller.ssl.client.auth'), 'required');
    assert.equal(p.get('authorizer.class.name'), 'org.apache.kafka.metadata.authorizer.StandardAuthorizer');
    assert.equal(p.get('allow.everyone.if.no.acl.found'), 'false');
    assert.equal(p.get('super.users'), `User:${BROKER_USER};User:${ADMIN_USER}`);
    assert.equal([...p.keys()].some((k) => k.includes('PLAINTEXT') || (p.get(k) ?? '').includes('PLAINTEXT')), false);

    const env = security.env('switchyard-ingest', '127.0.0.1:19092');
    assert.deepEqual(Object.keys(env), ['KAFKA_BROKERS', 'KAFKA_SECURITY_PROTOCOL', 'KAFKA_SASL_MECHANISM', 'KAFKA_SASL_USERNAME', 'KAFKA_SASL_PASSWORD_FILE', 'KAFKA_SSL_CA_FILE']);
    assert.equal(readFileSync(env.KAFKA_SASL_PASSWORD_FILE!, 'utf8'), security.credentials.get('switchyard-ingest')!.password);
    assert.equal(Object.values(env).includes(security.credentials.get('switchyard-ingest')!.password), false);
  });
});
