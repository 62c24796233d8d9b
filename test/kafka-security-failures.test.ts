// What a service does when it cannot use a secured Kafka (docs/decisions/0015-kafka-security-variables.md),
// against a real broker with a SASL_SSL listener, SCRAM users and ACLs (tools/stack/secure.ts),
// started by this suite: refused credentials, a CA that did not sign the broker's certificate, a
// certificate that does not name the host, a broker that does not answer, and a principal missing
// one ACL each stop the service (exit 1) within 30 s with one log line that names the cause and the
// variable or ACL to fix, no stack trace, and no secret.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, connect, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { aclTable, userOf, type PrincipalAcls } from '@switchyard/platform/kafka/acls';
import { createAcls } from '@switchyard/platform/kafka/acl-admin';
import { createKafka } from '@switchyard/platform/kafka/client';
import { groupIds, prefixOfPartitionIds } from '@switchyard/platform/kafka/groups';
import { createLogger } from '@switchyard/platform/logger';
import { makeTestCa } from '@switchyard/platform/test-support/tls-material';
import { freeKafkaAddresses, freePort } from '../tools/stack/ports.js';
import { runOnce, spawnService, type ServiceProcess } from '../tools/stack/services.js';
import { startStack, type Stack } from '../tools/stack/stack.js';
import { registerSecret } from '../tools/stack/test-logs.js';
import { uniquePrefix } from './support/stack.js';

const DEADLINE_MS = 30_000;
/** A principal with every grant of fan-out but the one on its consumer group. */
const PARTIAL_USER = 'switchyard-test-partial';
/** One with every grant of fan-out but Write on its partitions' transactional ids (needed once partitions are assigned). */
const NO_TXN_USER = 'switchyard-test-no-txn';
const portVars: Record<string, string> = { ingest: 'INGEST_PORT', fanout: 'FANOUT_PORT' };

interface Outcome { code: number | string; ms: number; lines: string[]; fatal: Array<{ msg: string; level: string }> }

/** Runs a service until it exits (killed after DEADLINE_MS + 10 s), with what it logged. */
async function runUntilExit(name: string, env: NodeJS.ProcessEnv): Promise<Outcome> {
  const started = Date.now();
  const proc: ServiceProcess = spawnService(name, { env: { ...env, [portVars[name]!]: String(await freePort()) } });
  const timer = setTimeout(() => void proc.stop('SIGKILL'), DEADLINE_MS + 10_000);
  const code = await proc.exited;
  clearTimeout(timer);
  const fatal = proc.output.flatMap((line) => {
    try { const parsed = JSON.parse(line) as { level?: string; msg?: string }; return parsed.level === 'fatal' ? [{ level: parsed.level, msg: parsed.msg ?? '' }] : []; } catch { return []; }
  });
  return { code, ms: Date.now() - started, lines: proc.output, fatal };
}

/** One fatal line matching `pattern`, exit 1 within the deadline, no stack trace, none of `secrets`. */
function assertStoppedWith(outcome: Outcome, pattern: RegExp, secrets: string[]): void {
  const shown = outcome.lines.slice(-15).join('\n');
  assert.equal(outcome.code, 1, `exit code 1, got ${outcome.code}:\n${shown}`);
  assert.ok(outcome.ms < DEADLINE_MS, `stopped within ${DEADLINE_MS} ms, took ${outcome.ms}:\n${shown}`);
  assert.equal(outcome.fatal.length, 1, `one fatal line:\n${shown}`);
  assert.match(outcome.fatal[0]!.msg, pattern);
  assert.equal(outcome.lines.filter((l) => /\n?\s+at .+\(.+:\d+:\d+\)/.test(l) || /\\n\s+at /.test(l)).length, 0, `no stack trace:\n${shown}`);
  for (const secret of secrets) assert.ok(!outcome.lines.some((l) => l.includes(secret)), 'no secret in the output');
}

/** A TCP relay on 127.0.0.2 to the broker: reached there, the broker's certificate (127.0.0.1, localhost) names another host. */
async function relay(target: { host: string; port: number }): Promise<{ server: Server; address: string }> {
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = connect(target.port, target.host);
    for (const s of [client, upstream]) { sockets.add(s); s.on('close', () => sockets.delete(s)); s.on('error', () => s.destroy()); }
    client.pipe(upstream).pipe(client);
  });
  server.on('close', () => { for (const s of sockets) s.destroy(); });
  await new Promise<void>((resolve, reject) => { server.once('error', reject); server.listen(0, '127.0.0.2', resolve); });
  const { port } = server.address() as { port: number };
  return { server, address: `127.0.0.2:${port}` };
}

describe('a service on a secured Kafka it cannot use stops with one line naming the cause', { timeout: 600_000 }, () => {
  const prefix = uniquePrefix('secfail');
  const dir = mkdtempSync(join(tmpdir(), 'switchyard-secfail-'));
  let stack: Stack;
  let env: (user: string) => NodeJS.ProcessEnv;
  let passwords: string[] = [];

  before(async () => {
    // A stack of its own: secured, and with KAFKA_BROKERS/SCHEMA_REGISTRY_URL of the test run ignored.
    stack = await startStack({ dir, kafka: await freeKafkaAddresses(1), registryPort: await freePort(), log: () => undefined, env: {}, secure: { prefix, extraUsers: [PARTIAL_USER, NO_TXN_USER] } });
    const security = stack.security!;
    passwords = [...security.credentials.values()].map((c) => c.password);
    for (const c of security.credentials.values()) registerSecret(c.password, `SCRAM password of ${c.user}`);
    env = (user) => ({ ...security.env(user, stack.brokers), SCHEMA_REGISTRY_URL: stack.registryUrl, SWITCHYARD_TOPIC_PREFIX: prefix, SWITCHYARD_PARTITIONS: '2', LOG_LEVEL: 'info' });
    await runOnce('setup', { env: env(userOf('setup')) });
    // Fan-out's grants, one left out.
    const fanout = aclTable({ prefix }).find((p) => p.role === 'fanout')!;
    const without = (user: string, left: (g: PrincipalAcls['grants'][number]) => boolean): PrincipalAcls => ({ ...fanout, user, principal: `User:${user}`, grants: fanout.grants.filter((g) => !left(g)) });
    const partial = without(PARTIAL_USER, (g) => g.resourceType === 'Group' && g.name === groupIds(prefix).fanout);
    const noTxn = without(NO_TXN_USER, (g) => g.resourceType === 'TransactionalId' && g.name === prefixOfPartitionIds(prefix, 'fanout'));
    assert.equal(partial.grants.length, fanout.grants.length - 1);
    assert.equal(noTxn.grants.length, fanout.grants.length - 1);
    const admin = createKafka({ brokers: [stack.brokers], clientId: 'test-acls', logger: createLogger({ service: 'test', level: 'silent' }), security: security.broker.client }).admin();
    await admin.connect();
    try { await createAcls(admin, [partial, noTxn]); } finally { await admin.disconnect(); }
  });
  after(async () => {
    await stack?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  for (const service of ['ingest', 'fanout']) {
    it(`${service}: a wrong SASL password`, async () => {
      const wrong = `wrong-${Date.now()}-password`;
      registerSecret(wrong, 'the wrong password');
      const { KAFKA_SASL_PASSWORD_FILE: _, ...rest } = env(userOf(service as 'ingest'));
      const outcome = await runUntilExit(service, { ...rest, KAFKA_SASL_PASSWORD: wrong });
      assertStoppedWith(outcome, new RegExp(`^Kafka refused the SASL credentials \\(SCRAM-SHA-512, user switchyard-${service}\\): check KAFKA_SASL_USERNAME / KAFKA_SASL_PASSWORD$`), [wrong, ...passwords]);
    });
  }

  it('ingest: a CA that did not sign the broker\'s certificate', async () => {
    const other = makeTestCa(dir, 'other-ca');
    const outcome = await runUntilExit('ingest', { ...env(userOf('ingest')), KAFKA_SSL_CA_FILE: other.certFile });
    assertStoppedWith(outcome, /^the certificate of Kafka broker 127\.0\.0\.1:\d+ is not trusted \((SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_VERIFY_LEAF_SIGNATURE|UNABLE_TO_GET_ISSUER_CERT_LOCALLY)\): check KAFKA_SSL_CA_FILE \(.*other-ca\.pem\)$/, passwords);
  });

  it('ingest: Node\'s default roots (KAFKA_SSL_CA_FILE unset) do not trust a private CA', async () => {
    const { KAFKA_SSL_CA_FILE: _, ...rest } = env(userOf('ingest'));
    const outcome = await runUntilExit('ingest', rest);
    assertStoppedWith(outcome, /is not trusted \(.+\): check KAFKA_SSL_CA_FILE \(unset: Node's default roots\)$/, passwords);
  });

  it('ingest: a broker address its certificate does not name', async () => {
    const [host, port] = stack.brokers.split(':');
    const { server, address } = await relay({ host: host!, port: Number(port) });
    try {
      const outcome = await runUntilExit('ingest', { ...env(userOf('ingest')), KAFKA_BROKERS: address });
      assertStoppedWith(outcome, new RegExp(`^the certificate of Kafka broker ${address.replace(/\./g, '\\.')} does not name the host it was reached at \\(ERR_TLS_CERT_ALTNAME_INVALID\\): check KAFKA_BROKERS`), passwords);
    } finally {
      server.close();
    }
  });

  it('ingest: a broker that does not answer (named in the log at once, stops after 15 s)', async () => {
    const closed = await freePort();
    const outcome = await runUntilExit('ingest', { ...env(userOf('ingest')), KAFKA_BROKERS: `127.0.0.1:${closed}` });
    assertStoppedWith(outcome, new RegExp(`^cannot reach Kafka broker 127\\.0\\.0\\.1:${closed} \\(ECONNREFUSED\\): check KAFKA_BROKERS`), passwords);
    // kafkajs tries many times; the log says so once, with a count at most every 30 s.
    const mentions = outcome.lines.filter((l) => l.includes('ECONNREFUSED'));
    assert.ok(mentions.length <= 3, `collapsed: ${mentions.length} lines name ECONNREFUSED`);
  });

  it('fanout: a principal missing Read on its consumer group', async () => {
    const user = { ...env(PARTIAL_USER), KAFKA_SASL_USERNAME: PARTIAL_USER, KAFKA_SASL_PASSWORD_FILE: stack.security!.credentials.get(PARTIAL_USER)!.passwordFile };
    const outcome = await runUntilExit('fanout', user);
    assertStoppedWith(outcome, new RegExp(`^Kafka denied Read on Group ${groupIds(prefix).fanout.replace(/\./g, '\\.')} to User:${PARTIAL_USER} \\(GROUP_AUTHORIZATION_FAILED\\)`), passwords);
  });

  it('fanout: a principal missing Write on its partitions\' transactional ids (refused once it is assigned partitions)', async () => {
    const user = { ...env(NO_TXN_USER), KAFKA_SASL_USERNAME: NO_TXN_USER, KAFKA_SASL_PASSWORD_FILE: stack.security!.credentials.get(NO_TXN_USER)!.passwordFile };
    const outcome = await runUntilExit('fanout', user);
    assertStoppedWith(outcome, new RegExp(`^Kafka denied Write on TransactionalId ${prefixOfPartitionIds(prefix, 'fanout').replace(/\./g, '\\.')}\\d+ to User:${NO_TXN_USER} \\(TRANSACTIONAL_ID_AUTHORIZATION_FAILED\\)`), passwords);
  });

  it('fanout: a broker that does not answer is named on /readyz while it retries', async () => {
    const closed = await freePort();
    const port = await freePort();
    const proc = spawnService('fanout', { env: { ...env(userOf('fanout')), KAFKA_BROKERS: `127.0.0.1:${closed}`, FANOUT_PORT: String(port) } });
    try {
      let problems: Record<string, string> | undefined;
      const until = Date.now() + 15_000;
      while (!problems && Date.now() < until) {
        await new Promise((r) => setTimeout(r, 300));
        const res = await fetch(`http://127.0.0.1:${port}/readyz`).catch(() => undefined);
        if (res) { assert.equal(res.status, 503); problems = ((await res.json()) as { problems?: Record<string, string> }).problems; }
      }
      assert.match(problems?.producer ?? '', new RegExp(`^cannot reach Kafka broker 127\\.0\\.0\\.1:${closed} \\(ECONNREFUSED\\): check KAFKA_BROKERS`), JSON.stringify(problems));
      assert.equal(await proc.exited, 1, 'then stops, naming it');
    } finally {
      await proc.stop('SIGKILL');
    }
  });
});
