import type { InvalidEvent } from '../schemas/generated.js';

/**
 * The invalid-events record of a Kafka record a stage could not read (bad framing, unknown schema,
 * unexpected type): the raw value is kept whole with where it came from, so operators can inspect
 * or re-produce it.
 */
export function unreadableRecord(stage: 'fanout' | 'delivery', reason: string, message: string, origin: { value: Buffer | null; topic: string; partition: number; offset: string }, now: number): InvalidEvent {
  return {
    reason, message, stage, sourceId: null, messageId: null, batchIndex: null,
    payload: origin.value ?? Buffer.alloc(0), originTopic: origin.topic, originPartition: origin.partition, originOffset: origin.offset, receivedAt: now,
  };
}
