import { randomUUID } from 'node:crypto';
import type { AvroCodec } from '@switchyard/platform/codec/avro-codec';
import { BestEffortWriter } from '@switchyard/platform/kafka/best-effort-writer';
import type { Kafka } from '@switchyard/platform/kafka/client';
import { connectClient } from '@switchyard/platform/kafka/connect';
import type { ServiceRuntime } from '@switchyard/platform/runtime';
import type { DeferralTrace, DeliveryAttempt } from '@switchyard/platform/schemas/generated';
import { initialiseCounter } from '@switchyard/platform/metrics';
import { ATTEMPT_RECORD_RESULTS, type DeliveryMetrics } from './delivery-metrics.js';

/**
 * The delivery-attempts recorder: attempts are handed to a BestEffortWriter — buffered, flushed
 * every 100 ms or 1000 attempts as ONE Kafka record (a TraceRecords batch), acks=1, its own
 * producer, the oldest attempts dropped (and counted) beyond 50 000 waiting. One record per batch
 * rather than per attempt: kafkajs's per-record encoding and partitioning was most of the
 * recorder's cost on the delivery hot path (BENCHMARKS.md's attempts row measures the recorder on
 * against off). The key is this instance's id, so its
 * batches stay in order on one partition; the trace index orders a message's attempts by time. Delivery never waits for it. Started before the consumer so that
 * shutdown closes it after the last task finished (hooks run in reverse order).
 */
export async function startAttemptRecorder(runtime: ServiceRuntime, kafka: Kafka, codec: AvroCodec, topic: string, metrics: DeliveryMetrics): Promise<(record: DeliveryAttempt | DeferralTrace) => void> {
  const producer = BestEffortWriter.producer(kafka);
  await connectClient(runtime.lifecycle, 'attempts-producer', producer);
  const key = `delivery-${randomUUID()}`;
  initialiseCounter(metrics.attemptRecords, { result: ATTEMPT_RECORD_RESULTS });
  const writer = new BestEffortWriter<DeliveryAttempt | DeferralTrace>(producer, {
    topic, logger: runtime.logger,
    toMessages: (records) => {
      const attempts: DeliveryAttempt[] = [];
      const deferrals: DeferralTrace[] = [];
      for (const r of records) if ('messageIds' in r) deferrals.push(r); else attempts.push(r);
      return [{ key, value: codec.encode('io.switchyard.pipeline.TraceRecords', { fanouts: [], attempts, deferrals }) }];
    },
    onWritten: (n) => metrics.attemptRecords.inc({ result: 'written' }, n),
    onDropped: (reason, n) => metrics.attemptRecords.inc({ result: `dropped_${reason}` }, n),
  });
  writer.start();
  runtime.lifecycle.onShutdown('attempts-recorder', () => writer.close());
  return (record) => writer.write(record);
}
