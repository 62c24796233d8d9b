import type { AvroCodec } from '@switchyard/platform/codec/avro-codec';
import { BestEffortWriter } from '@switchyard/platform/kafka/best-effort-writer';
import type { Kafka } from '@switchyard/platform/kafka/client';
import { connectClient } from '@switchyard/platform/kafka/connect';
import type { ServiceRuntime } from '@switchyard/platform/runtime';
import type { DeliveryAttempt } from '@switchyard/platform/schemas/generated';
import type { DeliveryMetrics } from './delivery-metrics.js';

/**
 * The delivery-attempts recorder: each attempt becomes a small Avro record (key messageId, so a
 * message's records stay in order on one partition) handed to a BestEffortWriter — buffered,
 * flushed every 100 ms or 1000 records, acks=1, its own producer, the oldest records dropped (and
 * counted) beyond 50 000 waiting. Delivery never waits for it. Started before the consumer so that
 * shutdown closes it after the last task finished (hooks run in reverse order).
 */
export async function startAttemptRecorder(runtime: ServiceRuntime, kafka: Kafka, codec: AvroCodec, topic: string, metrics: DeliveryMetrics): Promise<(attempt: DeliveryAttempt) => void> {
  const producer = BestEffortWriter.producer(kafka);
  await connectClient(runtime.lifecycle, 'attempts-producer', producer);
  const writer = new BestEffortWriter(producer, {
    topic, logger: runtime.logger,
    onWritten: (n) => metrics.attemptRecords.inc({ result: 'written' }, n),
    onDropped: (reason, n) => metrics.attemptRecords.inc({ result: `dropped_${reason}` }, n),
  });
  writer.start();
  runtime.lifecycle.onShutdown('attempts-recorder', () => writer.close());
  return (attempt) => writer.write(attempt.messageId, codec.encode('io.switchyard.pipeline.DeliveryAttempt', attempt));
}
