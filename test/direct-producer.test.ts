// The direct-producer example (docs/tracking-api.md) writes a record the pipeline reads like any
// other.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { topicNames } from '@switchyard/platform/kafka/topics';
// Before the example, which loads kafkajs itself: the platform's Kafka client must load kafkajs
// first, with its corrected aborted-record filter (kafkajs/index.ts).
import { testStack, uniquePrefix } from './support/stack.js';
import { pipelineEnv, setupTopics } from './support/services.js';
import { TopicReader } from './support/topic-reader.js';
import { produceTrack } from '../examples/direct-producer.js';

it('examples/direct-producer.ts writes a Track our codec decodes, keyed by source and user', async () => {
  const prefix = uniquePrefix('direct');
  await setupTopics(pipelineEnv(prefix));
  const { brokers, registryUrl } = testStack();
  const topic = topicNames(prefix).ingest;
  const messageId = await produceTrack({ brokers: brokers.split(','), registryUrl, sourceId: 'src_direct', topic }, 'user-7', 'Order Completed', { revenue: 42 });
  const reader = await new TopicReader([topic]).start();
  try {
    const [record] = await reader.waitFor<Record<string, unknown>>(topic, (v) => v.messageId === messageId);
    assert.equal(record!.event, 'Order Completed');
    assert.deepEqual(JSON.parse(String(record!.properties)), { revenue: 42 });
    assert.equal(reader.records.find((r) => (r.decoded?.value as { messageId?: string })?.messageId === messageId)?.key, 'src_direct:user-7');
  } finally {
    await reader.stop();
  }
});
