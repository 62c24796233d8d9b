// Against the three-broker cluster `SWITCHYARD_TEST_BROKERS=3 npm test` starts (this file starts
// no broker): setup replicates Switchyard's topics three times with min.insync.replicas 2, the
// internal topics and the registry's journal are replicated too, and one event goes ingest →
// fan-out → delivery → a receiver while two fan-out and two delivery instances share the work.
// Skipped on the default one-broker run.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { makeDestination, makeSource, writeConfig } from './support/config.js';
import { startReceiver, type Receiver } from './support/receiver.js';
import { pipelineEnv, setupTopics, startInstances, startService, type RunningService } from './support/services.js';
import { testKafka, uniquePrefix } from './support/stack.js';

const TOPIC_RESOURCE = 2;
const brokers = Number(process.env.SWITCHYARD_TEST_BROKERS ?? 1);
const skip = brokers >= 3 ? false : 'needs a cluster of three brokers: SWITCHYARD_TEST_BROKERS=3 npm test -- test/cluster.test.ts';

describe('a three-broker cluster', { skip }, () => {
  const prefix = uniquePrefix('cluster');
  const admin = testKafka('cluster').admin();
  const services: RunningService[] = [];
  let receiver: Receiver | undefined;
  before(() => admin.connect());
  after(async () => {
    await Promise.all(services.map((s) => s.stop()));
    await receiver?.close();
    await admin.disconnect();
  });

  /** Replicas and in-sync replicas of every partition, and min.insync.replicas, of each topic. */
  async function replication(topics: string[]) {
    const metadata = await admin.fetchTopicMetadata({ topics });
    const configs = await admin.describeConfigs({ includeSynonyms: false, resources: topics.map((name) => ({ type: TOPIC_RESOURCE, name, configNames: ['min.insync.replicas'] })) });
    return topics.map((name) => {
      const partitions = metadata.topics.find((t) => t.name === name)?.partitions ?? [];
      return {
        name,
        replicas: [...new Set(partitions.map((p) => p.replicas.length))],
        inSync: [...new Set(partitions.map((p) => p.isr.length))],
        minInsync: configs.resources.find((r) => r.resourceName === name)?.configEntries[0]?.configValue,
      };
    });
  }

  it('the cluster has three brokers and an elected controller', async () => {
    const cluster = await admin.describeCluster();
    assert.equal(cluster.brokers.length, 3, `brokers: ${cluster.brokers.map((b) => `${b.host}:${b.port}`).join(', ')}`);
    assert.notEqual(cluster.controller, null);
  });

  it('setup creates every topic with three replicas, all in sync, and min.insync.replicas 2', async () => {
    await setupTopics(pipelineEnv(prefix, { SWITCHYARD_REPLICATION_FACTOR: '3' }));
    const topics = (await admin.listTopics()).filter((t) => t.startsWith(prefix)).sort();
    assert.ok(topics.length >= 10, `topics: ${topics.join(', ')}`);
    for (const t of await replication(topics)) assert.deepEqual(t, { name: t.name, replicas: [3], inSync: [3], minInsync: '2' });
  });

  it('one event goes ingest → two fan-out instances → two delivery instances → the receiver', async () => {
    receiver = await startReceiver();
    const source = makeSource();
    const destination = makeDestination(source.id, { webhooks: [{ url: receiver.url, headers: {}, clientCertificate: null }] });
    await writeConfig(prefix, { sources: [source], destinations: [destination] });
    const env = pipelineEnv(prefix, { SWITCHYARD_ALLOWED_CIDRS: '127.0.0.0/8' });
    const [ingest, fanouts, deliveries] = await Promise.all([startService('ingest', env), startInstances('fanout', env, 2), startInstances('delivery', env, 2)]);
    services.push(ingest, ...fanouts, ...deliveries);

    // Both instances of each joined its group (the partitions are shared between them).
    const groups = [`${prefix}fanout`, `${prefix}delivery`];
    const deadline = Date.now() + 30_000;
    for (;;) {
      const { groups: described } = await admin.describeGroups(groups);
      const members = groups.map((g) => described.find((d) => d.groupId === g)?.members.length ?? 0);
      if (members.every((m) => m === 2) && described.every((d) => d.state === 'Stable')) break;
      assert.ok(Date.now() < deadline, `group members ${groups.map((g, i) => `${g}: ${members[i]}`).join(', ')} after 30 s`);
      await sleep(250);
    }

    const messageId = `cluster-${randomUUID()}`;
    const res = await fetch(`${ingest.url}/v1/track`, {
      method: 'POST',
      headers: { authorization: `Basic ${Buffer.from(`${source.writeKeys[0]}:`).toString('base64')}`, 'content-type': 'application/json' },
      body: JSON.stringify({ userId: 'u-1', event: 'Clustered', messageId }),
    });
    assert.equal(res.status, 200, await res.text());
    await receiver.waitFor(() => receiver!.forMessage(messageId).length > 0, 30_000);
    assert.equal(JSON.parse(receiver.forMessage(messageId)[0]!.text).event, 'Clustered');
  });

  it("Kafka's internal topics and the registry's journal have three replicas and min.insync.replicas 2", async () => {
    // __transaction_state exists once fan-out has begun a transaction (the test above).
    const topics = ['__consumer_offsets', '__transaction_state', 'kafkasql-journal'];
    for (const t of await replication(topics)) assert.deepEqual({ ...t, inSync: undefined }, { name: t.name, replicas: [3], inSync: undefined, minInsync: '2' });
  });
});
