// Topic declarations applied to the real broker, twice.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ensureTopics } from '@switchyard/platform/kafka/admin';
import { topicDeclarations } from '@switchyard/platform/kafka/topics';
import { testKafka, uniquePrefix } from './support/stack.js';

describe('ensureTopics', () => {
  const admin = testKafka('topics').admin();
  const prefix = uniquePrefix('topics');
  before(() => admin.connect());
  after(() => admin.disconnect());

  it('creates every declared topic once; a second run changes nothing', async () => {
    const declarations = topicDeclarations({ prefix, partitions: 3, retryTiers: 4 });
    const first = await ensureTopics(admin, declarations);
    assert.deepEqual(first.created.sort(), declarations.map((d) => d.name).sort());
    const second = await ensureTopics(admin, declarations);
    assert.deepEqual(second, { created: [], partitionsAdded: [], configsUpdated: [] });

    const metadata = await admin.fetchTopicMetadata({ topics: declarations.map((d) => d.name) });
    for (const d of declarations) assert.equal(metadata.topics.find((t) => t.name === d.name)?.partitions.length, d.partitions, d.name);
    const config = await admin.describeConfigs({ includeSynonyms: false, resources: [{ type: 2, name: `${prefix}config`, configNames: ['cleanup.policy'] }] });
    assert.equal(config.resources[0]?.configEntries[0]?.configValue, 'compact');
  });

  it('grows partitions and restores drifted configs, never shrinks', async () => {
    const declarations = topicDeclarations({ prefix, partitions: 3, retryTiers: 1 });
    await ensureTopics(admin, declarations);
    const ingest = `${prefix}ingest`;
    await admin.alterConfigs({ validateOnly: false, resources: [{ type: 2, name: ingest, configEntries: [{ name: 'retention.ms', value: '1000' }, { name: 'cleanup.policy', value: 'delete' }] }] });
    const grown = await ensureTopics(admin, topicDeclarations({ prefix, partitions: 5, retryTiers: 1 }));
    assert.ok(grown.partitionsAdded.includes(ingest));
    assert.ok(grown.configsUpdated.includes(ingest));
    const shrink = await ensureTopics(admin, topicDeclarations({ prefix, partitions: 2, retryTiers: 1 }));
    assert.deepEqual(shrink.partitionsAdded, []);
    const metadata = await admin.fetchTopicMetadata({ topics: [ingest] });
    assert.equal(metadata.topics[0]?.partitions.length, 5);
  });
});
