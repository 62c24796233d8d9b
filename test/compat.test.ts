// The official analytics clients, unmodified, against our ingest service: @segment/analytics-node
// from npm, and the Go library (v3.3.0 and the deprecated v2) through the Go module proxy, driven by
// the small programs in test/compat/go/. Each call type is read back, decoded, from the ingest topic.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';
import { Analytics } from '@segment/analytics-node';
import { topicNames } from '@switchyard/platform/kafka/topics';
import { repoRoot } from '../tools/stack/paths.js';
import { makeSource, writeConfig } from './support/config.js';
import { pipelineEnv, setupTopics, startService, type RunningService } from './support/services.js';
import { uniquePrefix } from './support/stack.js';
import { TopicReader } from './support/topic-reader.js';

type Rec = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- decoded records of several shapes
const json = (text: string | null) => (text === null ? null : JSON.parse(text));

describe('official client libraries against the ingest service', () => {
  const prefix = uniquePrefix('compat');
  const topics = topicNames(prefix);
  const source = makeSource({ name: 'Compat' });
  const writeKey = source.writeKeys[0]!;
  let ingest: RunningService;
  let reader: TopicReader;
  const byMessageId = async (ids: string[]) => {
    const found = await reader.waitFor<Rec>(topics.ingest, (v) => ids.includes(v.messageId), ids.length, 30_000);
    return new Map(found.map((v) => [v.messageId as string, v]));
  };

  before(async () => {
    const env = pipelineEnv(prefix);
    await setupTopics(env);
    await writeConfig(prefix, { sources: [source] });
    ingest = await startService('ingest', env);
    reader = await new TopicReader([topics.ingest, topics.invalidEvents]).start();
  });
  after(async () => {
    await reader?.stop();
    await ingest?.stop();
  });

  it('@segment/analytics-node: all six call types arrive with their fields', async () => {
    const run = randomUUID();
    const userId = `node-${run}`;
    const errors: unknown[] = [];
    const analytics = new Analytics({ writeKey, host: ingest.url, flushAt: 20, flushInterval: 200, maxRetries: 2 });
    analytics.on('error', (err) => errors.push(err));
    const id = (type: string) => `node-${type}-${run}`;
    analytics.identify({ messageId: id('identify'), userId, traits: { name: 'Ada', email: 'ada@example.com' } });
    analytics.track({ messageId: id('track'), userId, event: 'Order Completed', properties: { revenue: 9.99 }, integrations: { All: false, Webhooks: true } });
    analytics.page({ messageId: id('page'), userId, category: 'Docs', name: 'Pricing', properties: { url: 'https://x.test/pricing', path: '/pricing' } });
    analytics.screen({ messageId: id('screen'), userId, name: 'Home', properties: { from: 'test' } });
    analytics.group({ messageId: id('group'), userId, groupId: `g-${run}`, traits: { plan: 'pro' } });
    analytics.alias({ messageId: id('alias'), userId, previousId: `anon-${run}` });
    analytics.track({ messageId: id('historical'), anonymousId: `anon-${run}`, event: 'Imported', timestamp: new Date('2020-01-02T03:04:05.678Z') });
    await analytics.closeAndFlush({ timeout: 10_000 });
    assert.deepEqual(errors, []);

    const got = await byMessageId(['identify', 'track', 'page', 'screen', 'group', 'alias', 'historical'].map(id));
    const identify = got.get(id('identify'))!;
    assert.equal(identify.userId, userId);
    assert.deepEqual(json(identify.traits), { name: 'Ada', email: 'ada@example.com' });
    assert.equal(json(identify.context).library.name, '@segment/analytics-node');
    assert.ok(identify.originalTimestamp > 0 && identify.sentAt > 0);
    const track = got.get(id('track'))!;
    assert.deepEqual([track.event, json(track.properties), json(track.integrations)], ['Order Completed', { revenue: 9.99 }, { All: false, Webhooks: true }]);
    const page = got.get(id('page'))!;
    assert.deepEqual([page.name, page.category, json(page.properties).path], ['Pricing', 'Docs', '/pricing']);
    const screen = got.get(id('screen'))!;
    assert.deepEqual([screen.name, json(screen.properties)], ['Home', { from: 'test' }]);
    const group = got.get(id('group'))!;
    assert.deepEqual([group.groupId, json(group.traits)], [`g-${run}`, { plan: 'pro' }]);
    const alias = got.get(id('alias'))!;
    assert.deepEqual([alias.userId, alias.previousId], [userId, `anon-${run}`]);
    const historical = got.get(id('historical'))!;
    assert.equal(historical.originalTimestamp, Date.parse('2020-01-02T03:04:05.678Z'));
    assert.ok(historical.timestamp < Date.parse('2020-01-03'), 'a past timestamp is kept (historical import)');
  });

  /** Runs one Go driver; it exits non-zero if the library reported any failure. */
  const runGo = async (version: 'v2' | 'v3', run: string) => {
    const { stdout } = await promisify(execFile)('go', ['run', '.'], {
      cwd: join(repoRoot, 'test/compat/go', version),
      env: { ...process.env, SWITCHYARD_ENDPOINT: ingest.url, SWITCHYARD_WRITE_KEY: writeKey, RUN_ID: run, TZ: 'UTC' },
      timeout: 240_000,
    });
    return stdout.trim().split('\n').map((l) => JSON.parse(l) as { type: string; messageId: string });
  };

  it('analytics-go v3.3.0: every call type, library context from the batch level, historical timestamp', async () => {
    const run = randomUUID();
    const sent = await runGo('v3', run);
    assert.deepEqual(sent.map((s) => s.type).sort(), ['alias', 'group', 'identify', 'page', 'screen', 'track', 'track'].sort());
    const got = await byMessageId(sent.map((s) => s.messageId));
    const user = `go-v3-user-${run}`;
    for (const v of got.values()) {
      assert.equal(v.userId, user);
      assert.equal(json(v.context).library.name, 'analytics-go', 'batch-level context merged into each call');
      assert.ok(v.sentAt !== null);
    }
    const track = got.get(`go-v3-track-${run}`)!;
    assert.deepEqual([track.event, json(track.properties), json(track.integrations), json(track.context).app], ['Order Completed', { revenue: 9.99, currency: 'EUR' }, { All: false, Webhooks: true }, { name: 'compat', version: '1.0' }]);
    assert.equal(got.get(`go-v3-track-historical-${run}`)!.originalTimestamp, Date.parse('2020-01-02T03:04:05.678Z'));
    assert.deepEqual(json(got.get(`go-v3-identify-${run}`)!.traits), { name: 'Ada', plan: 'pro', 'ünïcode': '日本' });
    const page = got.get(`go-v3-page-${run}`)!;
    assert.equal(page.name, 'Pricing');
    assert.equal(json(page.properties).url, 'https://example.com/pricing');
    assert.equal(got.get(`go-v3-screen-${run}`)!.name, 'Home');
    assert.equal(got.get(`go-v3-group-${run}`)!.groupId, `g-${run}`);
    assert.equal(got.get(`go-v3-alias-${run}`)!.previousId, `go-v3-anon-${run}`);
  });

  it('analytics-go v2 (deprecated): page traits as properties, +0000 timestamps, library context only at batch level', async () => {
    const run = randomUUID();
    const sent = await runGo('v2', run);
    assert.deepEqual(sent.map((s) => s.type).sort(), ['alias', 'group', 'identify', 'page', 'track']);
    const got = await byMessageId(sent.map((s) => s.messageId));
    for (const v of got.values()) {
      assert.equal(json(v.context).library.name, 'analytics-go');
      assert.equal(v.originalTimestamp % 1000, 0, '+0000 timestamps carry whole seconds');
      assert.ok(Math.abs(v.originalTimestamp - v.receivedAt) < 60_000);
    }
    const page = got.get(`go-v2-page-${run}`)!;
    assert.deepEqual([page.name, page.category], ['Pricing', 'Docs']);
    assert.deepEqual(json(page.properties), { path: '/pricing', referrer: 'https://example.com/', title: 'Pricing', url: 'https://example.com/pricing' });
    const track = got.get(`go-v2-track-${run}`)!;
    assert.deepEqual([track.event, json(track.integrations)], ['Order Completed', { All: false, Webhooks: true }]);
    assert.deepEqual(json(got.get(`go-v2-identify-${run}`)!.traits), { name: 'Ada', plan: 'pro', 'ünïcode': '日本' });
    assert.equal(got.get(`go-v2-group-${run}`)!.groupId, `g-${run}`);
    const alias = got.get(`go-v2-alias-${run}`)!;
    assert.deepEqual([alias.userId, alias.previousId], [`go-v2-user-${run}`, `go-v2-anon-${run}`]);
  });
});
