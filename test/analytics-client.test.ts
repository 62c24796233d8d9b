// Our TypeScript client (packages/analytics) → the real ingest service → the ingest topic.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, it } from 'node:test';
import { Analytics } from '@switchyard/analytics';
import { topicNames } from '@switchyard/platform/kafka/topics';
import { makeSource, writeConfig } from './support/config.js';
import { pipelineEnv, setupTopics, startService, type RunningService } from './support/services.js';
import { uniquePrefix } from './support/stack.js';
import { TopicReader } from './support/topic-reader.js';

type Rec = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- decoded records of several shapes
const prefix = uniquePrefix('client');
const topics = topicNames(prefix);
const source = makeSource();
let ingest: RunningService;
let reader: TopicReader;

before(async () => {
  const env = pipelineEnv(prefix);
  await setupTopics(env);
  await writeConfig(prefix, { sources: [source] });
  ingest = await startService('ingest', env);
  reader = await new TopicReader([topics.ingest]).start();
});
after(async () => {
  await reader?.stop();
  await ingest?.stop();
});

it('@switchyard/analytics: every call type arrives decoded with its fields', async () => {
  const run = randomUUID();
  const userId = `ts-client-${run}`;
  const analytics = new Analytics(source.writeKeys[0]!, { endpoint: ingest.url, flushAt: 50 });
  const errors: unknown[] = [];
  analytics.on('error', (err) => errors.push(err));
  const id = (t: string) => `${t}-${run}`;
  analytics.identify({ messageId: id('identify'), userId, traits: { name: 'Ada', plan: 'pro' } });
  analytics.track({ messageId: id('track'), userId, event: 'Order Completed', properties: { revenue: 9.99 }, integrations: { All: false, Webhooks: true } });
  analytics.page({ messageId: id('page'), userId, name: 'Pricing', category: 'Docs', properties: { path: '/pricing' } });
  analytics.screen({ messageId: id('screen'), userId, name: 'Home', context: { device: { model: 'Pixel' } } });
  analytics.group({ messageId: id('group'), userId, groupId: 'g-1', traits: { seats: 10 } });
  analytics.alias({ messageId: id('alias'), userId, previousId: `anon-${run}` });
  analytics.track({ messageId: id('historical'), anonymousId: `anon-${run}`, event: 'Imported', timestamp: new Date('2020-01-02T03:04:05.678Z') });
  await analytics.close();
  assert.deepEqual(errors, []);

  const ids = ['identify', 'track', 'page', 'screen', 'group', 'alias', 'historical'].map(id);
  const got = new Map((await reader.waitFor<Rec>(topics.ingest, (v) => ids.includes(v.messageId), ids.length)).map((v) => [v.messageId, v]));
  const j = (t: string | null) => (t === null ? null : JSON.parse(t));
  assert.deepEqual(j(got.get(id('identify'))!.traits), { name: 'Ada', plan: 'pro' });
  const track = got.get(id('track'))!;
  assert.deepEqual([track.event, j(track.properties), j(track.integrations)], ['Order Completed', { revenue: 9.99 }, { All: false, Webhooks: true }]);
  assert.equal(j(track.context).library.name, '@switchyard/analytics', 'library context from the batch level');
  assert.ok(track.sentAt !== null && track.originalTimestamp !== null);
  const page = got.get(id('page'))!;
  assert.deepEqual([page.name, page.category, j(page.properties)], ['Pricing', 'Docs', { path: '/pricing' }]);
  assert.deepEqual(j(got.get(id('screen'))!.context).device, { model: 'Pixel' });
  assert.equal(got.get(id('group'))!.groupId, 'g-1');
  assert.deepEqual([got.get(id('alias'))!.userId, got.get(id('alias'))!.previousId], [userId, `anon-${run}`]);
  assert.equal(got.get(id('historical'))!.originalTimestamp, Date.parse('2020-01-02T03:04:05.678Z'));
});

it('@switchyard/analytics: timestamps in every accepted form reach the ingest topic at the instant they name', async () => {
  // Before the client normalised them, 'March 7, 2024' was sent as given and ingest moved the
  // call to invalid-events; ISO strings with offsets and nanoseconds must keep their instant.
  const run = randomUUID();
  const cases: [string, Date | string, number][] = [
    ['month-name', 'March 7, 2024', Date.parse('March 7, 2024')],
    ['utc-string', 'Thu, 07 Mar 2024 10:00:00 GMT', Date.parse('2024-03-07T10:00:00Z')],
    ['go-offset-nanos', '2016-04-26T20:14:48.123456789+0200', Date.parse('2016-04-26T18:14:48.123Z')],
    ['no-zone', '2026-11-22T10:00', Date.parse('2026-11-22T10:00:00Z')],
    ['date', new Date('2020-01-02T03:04:05.678Z'), Date.parse('2020-01-02T03:04:05.678Z')],
  ];
  const analytics = new Analytics(source.writeKeys[0]!, { endpoint: ingest.url, flushAt: 50 });
  const errors: unknown[] = [];
  analytics.on('error', (err) => errors.push(err));
  for (const [name, timestamp] of cases) analytics.track({ messageId: `${name}-${run}`, userId: `ts-${run}`, event: 'Imported', timestamp });
  await analytics.close();
  assert.deepEqual(errors, []);

  const ids = cases.map(([name]) => `${name}-${run}`);
  const got = new Map((await reader.waitFor<Rec>(topics.ingest, (v) => ids.includes(v.messageId), ids.length)).map((v) => [v.messageId, v]));
  for (const [name, , expected] of cases) assert.equal(got.get(`${name}-${run}`)!.originalTimestamp, expected, name);
});
