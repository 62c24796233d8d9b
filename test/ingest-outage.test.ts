// Kafka goes away under the ingest service: requests get 503 with Retry-After (never a false 200),
// and once the broker is back they are accepted again. Every request answered 200 is in the topic.
// A write key ingest does not know is refused with 401 only while its configuration is known to be
// up to date: with the broker gone it gets 503 CONFIG_BEHIND, and a source created as the broker
// comes back is never refused.
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { topicNames } from '@switchyard/platform/kafka/topics';
import { ensureArtifacts } from '../tools/stack/artifacts.js';
import { startKafka, type RunningKafka } from '../tools/stack/kafka.js';
import { freePort } from '../tools/stack/ports.js';
import { makeSource, writeConfig } from './support/config.js';
import { pipelineEnv, setupTopics, startService, type RunningService } from './support/services.js';
import { uniquePrefix } from './support/stack.js';
import { TopicReader } from './support/topic-reader.js';

describe('ingest while the broker is stopped and restarted', () => {
  const prefix = uniquePrefix('outage');
  const topics = topicNames(prefix);
  const source = makeSource();
  const auth = `Basic ${Buffer.from(`${source.writeKeys[0]}:`).toString('base64')}`;
  let kafkaOpts: Parameters<typeof startKafka>[0];
  let kafka: RunningKafka;
  let ingest: RunningService;

  before(async () => {
    // A broker of its own, so stopping it disturbs no other suite (the registry stays up).
    const { kafkaLibs } = await ensureArtifacts({ log: () => undefined });
    kafkaOpts = { libs: kafkaLibs, dir: mkdtempSync(join(tmpdir(), 'switchyard-outage-')), port: await freePort(), controllerPort: await freePort(), heap: '512m' };
    kafka = await startKafka(kafkaOpts);
    const env = pipelineEnv(prefix, { KAFKA_BROKERS: kafka.brokers, INGEST_ACK_TIMEOUT: '2s' });
    await setupTopics(env);
    await writeConfig(prefix, { sources: [source] }, kafka.brokers);
    ingest = await startService('ingest', env);
  });
  after(async () => {
    await ingest?.stop('SIGKILL');
    await kafka?.stop();
  });

  it('answers 503 + Retry-After while Kafka is down, accepts again after, and every 200 is in the topic', async () => {
    const accepted: string[] = [];
    const statuses = new Map<number, number>();
    let retryAfter: string | null = null;
    let n = 0;
    let running = true;
    const worker = async () => {
      while (running) {
        const messageId = `outage-${n++}`;
        let status = 0;
        try {
          const res = await fetch(`${ingest.url}/v1/track`, { method: 'POST', headers: { authorization: auth }, body: JSON.stringify({ userId: `u${n % 7}`, event: 'Tick', messageId }), signal: AbortSignal.timeout(15_000) });
          status = res.status;
          if (status === 503) retryAfter = res.headers.get('retry-after');
          await res.arrayBuffer();
        } catch { status = -1; }
        statuses.set(status, (statuses.get(status) ?? 0) + 1);
        if (status === 200) accepted.push(messageId);
        await sleep(status === 200 ? 20 : 200);
      }
    };
    const workers = Array.from({ length: 4 }, worker);

    await sleep(1500);
    const beforeStop = accepted.length;
    await kafka.stop();
    const stoppedAt = Date.now();
    while ((statuses.get(503) ?? 0) < 4 && Date.now() - stoppedAt < 30_000) await sleep(200);
    const acceptedWhileDown = accepted.length;
    await sleep(2000);
    assert.equal(accepted.length, acceptedWhileDown, 'nothing is accepted while the broker is down');

    kafka = await startKafka(kafkaOpts);
    const restartedAt = Date.now();
    while (accepted.length < acceptedWhileDown + 20 && Date.now() - restartedAt < 60_000) await sleep(200);
    running = false;
    await Promise.all(workers);

    console.log(`# outage: ${JSON.stringify(Object.fromEntries(statuses))} (status: requests); accepted ${beforeStop} before the stop, ${accepted.length} in all; accepting again ${((Date.now() - restartedAt) / 1000).toFixed(1)} s after the restart`);
    assert.ok((statuses.get(503) ?? 0) > 0, 'saw 503 while the broker was down');
    assert.equal(retryAfter, '2');
    assert.ok(accepted.length >= acceptedWhileDown + 20, 'accepted again after the restart');

    const reader = await new TopicReader([topics.ingest], kafka.brokers).start();
    try {
      await reader.waitFor<{ messageId: string }>(topics.ingest, (v) => accepted.includes(v.messageId), accepted.length, 30_000);
      const inTopic = new Set(reader.values<{ messageId: string }>(topics.ingest).map((v) => v.messageId));
      assert.deepEqual(accepted.filter((id) => !inTopic.has(id)), [], 'every request answered 200 is in the topic');
    } finally {
      await reader.stop();
    }
  });

  it('an unknown write key: 401 with the view current, 503 CONFIG_BEHIND + Retry-After with the broker down, and a source created as it returns is never refused', async () => {
    const track = async (key: string) => {
      const res = await fetch(`${ingest.url}/v1/track`, { method: 'POST', headers: { authorization: `Basic ${Buffer.from(`${key}:`).toString('base64')}` }, body: JSON.stringify({ userId: 'u', event: 'Tick' }), signal: AbortSignal.timeout(15_000) });
      const text = await res.text();
      return { status: res.status, retryAfter: res.headers.get('retry-after'), code: text ? (JSON.parse(text) as { code?: string }).code : undefined };
    };
    const settings = async (key: string) => (await fetch(`${ingest.url}/v1/projects/${key}/settings`, { signal: AbortSignal.timeout(15_000) })).status;
    // Whatever the first test left behind, the view is current again once a known key is accepted.
    while ((await track(source.writeKeys[0]!)).status !== 200) await sleep(200);

    const unknownAt = Date.now();
    assert.deepEqual(await track('wk_nobody_has_this'), { status: 401, retryAfter: null, code: 'INVALID_WRITE_KEY' });
    const judgedInMs = Date.now() - unknownAt;
    assert.equal(await settings('wk_nobody_has_this'), 404);

    await kafka.stop();
    await sleep(500);
    const whileDown = await track('wk_nobody_has_this');
    assert.deepEqual(whileDown, { status: 503, retryAfter: '2', code: 'CONFIG_BEHIND' }, 'a key the view cannot judge is not refused');
    assert.equal(await settings('wk_nobody_has_this'), 503);

    kafka = await startKafka(kafkaOpts);
    const created = makeSource({ name: 'Created as the broker returns' });
    await writeConfig(prefix, { sources: [created] }, kafka.brokers);
    const statuses: number[] = [];
    const createdAt = Date.now();
    for (;;) {
      const { status } = await track(created.writeKeys[0]!);
      statuses.push(status);
      if (status === 200 || Date.now() - createdAt > 60_000) break;
      await sleep(100);
    }
    console.log(`# unknown key judged (401) in ${judgedInMs} ms with the view current; the source created after the restart answered ${JSON.stringify(statuses)}, accepted ${Date.now() - createdAt} ms after its creation was acknowledged`);
    assert.ok(!statuses.includes(401), 'never 401 for a valid key');
    assert.equal(statuses.at(-1), 200);
    assert.deepEqual(await track('wk_nobody_has_this'), { status: 401, retryAfter: null, code: 'INVALID_WRITE_KEY' });
  });
});
