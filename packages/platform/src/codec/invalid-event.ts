import type { InvalidEvent } from '../schemas/generated.js';

/**
 * The invalid-events record of a Kafka record a stage could not read (bad framing, unknown schema,
 * unexpected type) or refused (a direct record breaking a call rule, with the source and message
 * it names): the raw value is kept whole with where it came from, so operators can inspect or
 * re-produce it.
 */
export function unreadableRecord(stage: 'fanout' | 'delivery', reason: string, message: string, origin: { value: Buffer | null; topic: string; partition: number; offset: string }, now: number, event?: { sourceId: string; messageId: string }): InvalidEvent {
  return {
    reason, message, stage, sourceId: event?.sourceId ?? null, messageId: event?.messageId ?? null, batchIndex: null,
    payload: origin.value ?? Buffer.alloc(0), originTopic: origin.topic, originPartition: origin.partition, originOffset: origin.offset, receivedAt: now,
  };
}
