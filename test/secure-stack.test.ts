// The secured stack (tools/stack/secure.ts): a broker of this suite's own with a SASL_SSL listener
// only, KRaft's StandardAuthorizer refusing what no ACL allows, the registry on it, and every
// program connecting as its own principal with exactly the ACLs of packages/platform/src/kafka/acls.ts.
// The whole pipeline runs under them: an HTTP call to ingest and a record produced straight to the
// ingest topic both reach a webhook receiver on 127.0.0.1, so the table is proven sufficient; a
// principal lacking one grant stops fan-out, and one with none may do nothing.
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { AvroCodec } from '@switchyard/platform/codec/avro-codec';
import { aclTable, userOf, type AclRole } from '@switchyard/platform/kafka/acls';
import { createAcls } from '@switchyard/platform/kafka/acl-admin';
import { createKafka, createProducer } from '@switchyard/platform/kafka/client';
import { failureWatch } from '@switchyard/platform/kafka/failure-watch';
import { topicNames } from '@switchyard/platform/kafka/topics';
import { createLogger } from '@switchyard/platform/logger';
import { freeKafkaAddresses, freePort } from '../tools/stack/ports.js';
import { runOnce, spawnService } from '../tools/stack/services.js';
import { startStack, type Stack } from '../tools/stack/stack.js';
import { requestJson } from './support/http.js';
import { startReceiver, type Receiver } from './support/receiver.js';
import { newSecret, registerSecret } from './support/secrets.js';
import { startService, type RunningService } from './support/services.js';
import { uniquePrefix } from './support/stack.js';

/** A principal the stack creates with no ACLs: the test grants it fan-out's table less one grant. */
const PARTIAL = 'switchyard-fanout-partial';

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * The failure watch stops a process refused by Kafka (a service missing an ACL); in this process
 * the refusals are what is tested, so it reports them: expected ones through `denied`, any other
 * here, which the last test requires to stay empty.
 */
const unexpected: string[] = [];
const reportUnexpected = () => { failureWatch.reset(); failureWatch.handleFatal((message) => unexpected.push(message)); };

/** Runs what Kafka must refuse; returns the line the failure watch would have stopped a service with. */
async function denied(action: () => Promise<unknown>): Promise<string> {
  const lines: string[] = [];
  failureWatch.reset();
  failureWatch.handleFatal((message) => lines.push(message));
  try {
    await assert.rejects(action, /authoriz/i);
  } finally {
    reportUnexpected();
  }
  return lines[0] ?? '';
}

describe('the secured stack: SASL_SSL only, ACLs, each program as its own principal', () => {
  const prefix = uniquePrefix('secure');
  const topics = topicNames(prefix);
  const dir = mkdtempSync(join(tmpdir(), 'switchyard-secure-'));
  const token = newSecret('admin token of the secured stack');
  let stack: Stack;
  let receiver: Receiver;
  const services: RunningService[] = [];
  let control: RunningService;
  let ingest: RunningService;
  let base: NodeJS.ProcessEnv;
  const as = (user: string): NodeJS.ProcessEnv => ({ ...base, ...stack.security!.env(user, stack.brokers) });
  const kafkaAs = (user: string) => createKafka({
    brokers: stack.brokers.split(','), clientId: `test-${user}`, logger: createLogger({ service: 'test-secure', level: 'silent' }),
    security: stack.security!.clientSecurity(user), overrides: { retry: { retries: 2 } },
  });

  before(async () => {
    reportUnexpected();
    stack = await startStack({ dir, kafka: await freeKafkaAddresses(1), registryPort: await freePort(), log: () => undefined, env: {}, secure: { prefix, extraUsers: [PARTIAL] } });
    for (const { user, password } of stack.security!.credentials.values()) registerSecret(password, `SCRAM password of ${user}`);
    base = { SCHEMA_REGISTRY_URL: stack.registryUrl, SWITCHYARD_TOPIC_PREFIX: prefix, SWITCHYARD_PARTITIONS: '3', LOG_LEVEL: 'info', SWITCHYARD_ALLOWED_CIDRS: '127.0.0.0/8' };
    receiver = await startReceiver();
    await runOnce('setup', { env: as(userOf('setup')) });
    control = await startService('control', { ...as(userOf('control')), SWITCHYARD_ADMIN_TOKEN: token });
    services.push(control);
    // Each kept as soon as it runs, so `after` stops it whichever of the others fails to start.
    const started = await Promise.all((['ingest', 'fanout', 'delivery', 'audiences'] as const satisfies readonly AclRole[])
      .map(async (s) => { const running = await startService(s, as(userOf(s))); services.push(running); return running; }));
    ingest = started[0]!;
  });

  after(async () => {
    await Promise.all(services.map((s) => s.stop()));
    await receiver?.close();
    await stack?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  let source: { id: string; writeKey: string };
  const api = async (method: string, path: string, body?: unknown) => {
    const res = await requestJson(method, `${control.url}${path}`, { token, body });
    assert.ok(res.status < 300, `${method} ${path}: ${res.status} ${res.text}`);
    return res.body;
  };

  it('an HTTP call to ingest reaches the webhook receiver through every service on SASL_SSL', async () => {
    const created = await api('POST', '/v1/sources', { name: 'Secured source' });
    source = { id: created.id, writeKey: created.writeKeys[0] };
    await api('POST', '/v1/destinations', { sourceId: source.id, name: 'Receiver', type: 'webhooks', enabled: true, settings: { webhooks: [{ url: `${receiver.url}/secure` }] } });
    // The config views of fan-out and delivery follow the config topic within moments.
    await sleep(2000);
    const messageId = `http-${prefix}`;
    const res = await fetch(`${ingest.url}/v1/track`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Basic ${Buffer.from(`${source.writeKey}:`).toString('base64')}` },
      body: JSON.stringify({ messageId, userId: 'u-http', event: 'Order Completed', properties: { via: 'http' } }),
    });
    assert.equal(res.status, 200, await res.text());
    await receiver.waitFor(() => receiver.forMessage(messageId).length > 0, 60_000);
    assert.equal(JSON.parse(receiver.forMessage(messageId)[0]!.text).event, 'Order Completed');
  });

  it('a record produced straight to the ingest topic as switchyard-producer is delivered too', async () => {
    const codec = new AvroCodec({ registryUrl: stack.registryUrl });
    await codec.register(['io.switchyard.event.Track']);
    const now = Date.now();
    const messageId = `direct-${prefix}`;
    const producer = createProducer(kafkaAs(userOf('producer')));
    await producer.connect();
    try {
      await producer.send({
        topic: topics.ingest, acks: -1,
        messages: [{
          key: `${source.id}:u-direct`,
          value: codec.encode('io.switchyard.event.Track', {
            messageId, sourceId: source.id, userId: 'u-direct', anonymousId: null, event: 'Order Completed', properties: JSON.stringify({ via: 'kafka' }),
            timestamp: now, originalTimestamp: now, sentAt: null, receivedAt: now, context: JSON.stringify({ library: { name: 'secure-stack-test', version: '1' } }), integrations: null,
          }),
        }],
      });
    } finally {
      await producer.disconnect();
    }
    await receiver.waitFor(() => receiver.forMessage(messageId).length > 0, 60_000);
    assert.equal(JSON.parse(receiver.forMessage(messageId)[0]!.text).properties.via, 'kafka');
    // The same principal may write nowhere else.
    const line = await denied(async () => {
      const other = createProducer(kafkaAs(userOf('producer')));
      await other.connect();
      try {
        await other.send({ topic: topics.config, acks: -1, messages: [{ key: 'source:x', value: null }] });
      } finally {
        await other.disconnect();
      }
    });
    assert.match(line, new RegExp(`Kafka denied Write on Topic ${escape(topics.config)} to User:${userOf('producer')}`));
  });

  it('a principal with no ACLs can read nothing', async () => {
    const line = await denied(async () => {
      const admin = kafkaAs(PARTIAL).admin();
      await admin.connect();
      try {
        await admin.fetchTopicOffsets(topics.ingest);
      } finally {
        await admin.disconnect();
      }
    });
    assert.match(line, new RegExp(`Kafka denied Describe on Topic ${escape(topics.ingest)} to User:${PARTIAL}`));
  });

  it('fan-out as a principal missing one of its grants stops with a non-zero exit', async () => {
    const fanout = aclTable({ prefix }).find((p) => p.role === 'fanout')!;
    const grants = fanout.grants.filter((g) => g.name !== topics.fanoutPositions);
    assert.equal(grants.length, fanout.grants.length - 1);
    const admin = kafkaAs('switchyard-admin').admin();
    await admin.connect();
    try {
      await createAcls(admin, [{ ...fanout, user: PARTIAL, principal: `User:${PARTIAL}`, grants }]);
    } finally {
      await admin.disconnect();
    }
    const proc = spawnService('fanout', { env: { ...as(PARTIAL), FANOUT_PORT: String(await freePort()) } });
    const timer = setTimeout(() => void proc.stop('SIGKILL'), 120_000);
    const code = await proc.exited;
    clearTimeout(timer);
    assert.notEqual(code, 0, proc.output.slice(-10).join('\n'));
    assert.notEqual(code, 'SIGKILL', 'fan-out kept running without its grant on the positions topic');
    // One line names what to grant: the operation, the resource (with what the failed request touched) and the principal.
    const line = proc.output.find((l) => l.includes('Kafka denied'));
    assert.ok(line, proc.output.slice(-10).join('\n'));
    assert.match(line, new RegExp(`Kafka denied Describe on Topic [^"]*${escape(topics.fanoutPositions)}[^"]* to User:${PARTIAL}`));
  });

  it('writes every credential and key file 0600, and no password into any log; nothing else was refused', () => {
    assert.deepEqual(unexpected, []);
    const passwords = [...stack.security!.credentials.values()].map((c) => c.password);
    const walk = (d: string): string[] => readdirSync(d, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? walk(join(d, e.name)) : [join(d, e.name)]));
    const files = walk(dir);
    const secretFiles = files.filter((f) => /\.(password|env)$|(admin-client|server|application)\.properties$|keystore/.test(f));
    assert.ok(secretFiles.length >= 15, secretFiles.join(', '));
    for (const f of secretFiles) {
      assert.equal(statSync(f).mode & 0o777, 0o600, f);
    }
    const logs = files.filter((f) => /\.(log|out)$/.test(f));
    assert.ok(logs.length >= 2, 'the broker and registry logs');
    for (const f of logs) {
      const text = readFileSync(f, 'utf8');
      for (const p of passwords) assert.equal(text.includes(p), false, `${f} holds a password`);
    }
  });
});
