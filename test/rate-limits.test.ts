// A destination's rate limit over three delivery instances (docs/decisions/0018-destination-rate-limits.md):
// a burst of events for a destination limited to 20 requests a second reaches its receiver at that
// rate summed over the instances (no 10 s window more than 10 % over), every event arrives once,
// none is counted as a failed attempt, fan-out holds the tasks once delivery reports holding them,
// and a healthy destination of the same source gets its copies at once.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { topicNames } from '@switchyard/platform/kafka/topics';
import { makeDestination, makeSource, writeConfig } from './support/config.js';
import { metricTotal } from './support/metrics.js';
import { event, PipelineWriter, type EventName } from './support/pipeline-writer.js';
import { startReceiver, type Receiver } from './support/receiver.js';
import { pipelineEnv, setupTopics, startInstances, startService, type RunningService } from './support/services.js';
import { testKafka, uniquePrefix } from './support/stack.js';

const PER_SECOND = 20;
const EVENTS = 300;
const INSTANCES = 3;
/** The decision's bound: at most 10 % over the limit in any 10 s window. */
const MAX_PER_10S = Math.floor(PER_SECOND * 10 * 1.1);

/** The most requests any window of `windowMs` holds (receiver timestamps, ms). */
function busiestWindow(times: number[], windowMs: number): number {
  const sorted = [...times].sort((a, b) => a - b);
  let most = 0;
  for (let i = 0, j = 0; i < sorted.length; i++) {
    while (sorted[i]! - sorted[j]! >= windowMs) j++;
    most = Math.max(most, i - j + 1);
  }
  return most;
}

const messageIdOf = (text: string): string => (JSON.parse(text) as { messageId: string }).messageId;

describe('a destination rate limit over three delivery instances', () => {
  const prefix = uniquePrefix('rate-limits');
  const topics = topicNames(prefix);
  const admin = testKafka('rate-limits').admin();
  const services: RunningService[] = [];
  let deliveries: RunningService[] = [];
  let limited: Receiver;
  let healthy: Receiver;
  let writer: PipelineWriter;
  const source = makeSource();
  let limitedDestination: ReturnType<typeof makeDestination>;

  before(async () => {
    [limited, healthy] = await Promise.all([startReceiver(), startReceiver()]);
    limitedDestination = makeDestination(source.id, { webhooks: [{ url: limited.url, headers: {}, clientCertificate: null }], rateLimit: { perSecond: PER_SECOND } });
    const destinations = [limitedDestination, makeDestination(source.id, { webhooks: [{ url: healthy.url, headers: {}, clientCertificate: null }] })];
    // Six partitions, so that each of three instances holds some of every topic; a 2 s first tier,
    // so held tasks come round a few times within the test.
    const env = pipelineEnv(prefix, { SWITCHYARD_PARTITIONS: '6', SWITCHYARD_ALLOWED_CIDRS: '127.0.0.0/8', SWITCHYARD_RETRY_TIERS: '2s,5s' });
    await setupTopics(env);
    await writeConfig(prefix, { sources: [source], destinations });
    await admin.connect();
    const [fanout, started] = await Promise.all([startService('fanout', env), startInstances('delivery', env, INSTANCES)]);
    deliveries = started;
    services.push(fanout, ...started);
    writer = await new PipelineWriter().start();
    // Every instance holds its share before the burst: a rebalance in the middle is another test.
    const group = `${prefix}delivery`;
    const deadline = Date.now() + 60_000;
    for (;;) {
      const { groups } = await admin.describeGroups([group]);
      if (groups[0]?.state === 'Stable' && groups[0].members.length === INSTANCES) break;
      assert.ok(Date.now() < deadline, `delivery group ${groups[0]?.state} with ${groups[0]?.members.length} members after 60 s`);
      await sleep(250);
    }
  });
  after(async () => {
    await writer?.stop();
    await Promise.all(services.map((s) => s.stop()));
    await Promise.all([limited?.close(), healthy?.close()]);
    await admin.disconnect();
  });

  it(`sends at most ${PER_SECOND}/s over every instance, delivers every event, and the healthy destination is not slowed`, async () => {
    // One user per event: the tasks spread over every delivery partition, so over every instance.
    const events = Array.from({ length: EVENTS }, (_, i) => event('io.switchyard.event.Track', { sourceId: source.id, userId: `user-${i}`, event: 'Rate Limited' }));
    const ids = new Set(events.map((e) => e.messageId));
    const write = (some: typeof events) => writer.events(topics.ingest, ...some.map((e) => ['io.switchyard.event.Track', e] as [EventName, typeof e]));
    const urls = deliveries.map((d) => d.url);
    // Half, then the other half once delivery holds the destination's tasks: fan-out has been told
    // by then (destination-state) and holds the second half's tasks as ranges instead of writing them.
    await write(events.slice(0, EVENTS / 2));
    const holding = Date.now() + 30_000;
    while (await metricTotal(urls, 'delivery_rate_limited_total', { action: 'held' }) === 0) {
      assert.ok(Date.now() < holding, 'delivery held nothing within 30 s');
      await sleep(100);
    }
    await sleep(1000);
    const sentAt = Date.now();
    await write(events.slice(EVENTS / 2));

    const arrived = (r: Receiver) => new Set(r.requests.map((req) => messageIdOf(req.text)).filter((id) => ids.has(id)));
    await healthy.waitFor(() => arrived(healthy).size === EVENTS, 30_000);
    const healthyDone = Math.max(...healthy.requests.map((r) => r.at)) - sentAt;
    // The limited destination's backlog (15 s of its limit) must not hold the healthy one's tasks.
    assert.ok(healthyDone < 10_000, `the healthy destination got its ${EVENTS} events ${healthyDone} ms after they were written`);

    await limited.waitFor(() => arrived(limited).size === EVENTS, 180_000);
    const times = limited.requests.filter((r) => ids.has(messageIdOf(r.text))).map((r) => r.at);
    const busiest = busiestWindow(times, 10_000);
    const took = Math.max(...times) - Math.min(...times);
    assert.ok(busiest <= MAX_PER_10S, `${busiest} requests in the busiest 10 s window (limit ${PER_SECOND}/s, at most ${MAX_PER_10S})`);
    // A floor as well: 300 requests at 20/s take about 15 s, not the moment a burst would.
    assert.ok(took >= 10_000, `the ${EVENTS} requests took ${took} ms`);
    const perSecond = busiestWindow(times, 1000);

    // Holding is no failure: no attempt skipped, no retry, no dead letter.
    assert.equal(await metricTotal(urls, 'delivery_retries_total'), 0);
    assert.equal(await metricTotal(urls, 'delivery_dead_letters_total'), 0);
    assert.equal(await metricTotal(urls, 'delivery_attempts_total', { status_class: 'skipped' }), 0);
    const held = await metricTotal(urls, 'delivery_rate_limited_total', { action: 'held' });
    assert.ok(held > 0, 'some tasks were held in the first tier');
    const heldByFanout = await metricTotal([services[0]!.url], 'fanout_tasks_held_total', { destination: limitedDestination.id });
    assert.ok(heldByFanout > 0, 'fan-out held some of the second half instead of writing them');
    assert.equal(limited.requests.length, EVENTS, 'no event sent twice');
    // Every instance sent some of them: the limit was shared, not taken by one.
    const perInstance = await Promise.all(urls.map((url) => metricTotal([url], 'delivery_tasks_delivered_total', { destination: limitedDestination.id })));
    assert.ok(perInstance.every((n) => n > 0), `delivered per instance: ${perInstance.join(', ')}`);
    console.log(`rate limit ${PER_SECOND}/s over ${INSTANCES} instances: busiest 10 s ${busiest}, busiest 1 s ${perSecond}, ${EVENTS} events in ${took} ms, ${held} holds by delivery, ${heldByFanout} by fan-out; healthy done in ${healthyDone} ms`);
  });
});
