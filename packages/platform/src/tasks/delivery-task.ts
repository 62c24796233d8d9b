import type { Decoded } from '../codec/avro-codec.js';
import type { DeliveryTask } from '../schemas/generated.js';
import type { EventRecord } from './webhook-body.js';

const EVENT_TYPES: Record<string, EventRecord['type']> = {
  'io.switchyard.event.Track': 'track', 'io.switchyard.event.Page': 'page', 'io.switchyard.event.Screen': 'screen',
  'io.switchyard.event.Identify': 'identify', 'io.switchyard.event.Group': 'group', 'io.switchyard.event.Alias': 'alias',
  'io.switchyard.event.Delete': 'delete',
};

/** The event an ingest record holds, or undefined when the record is of another type. */
export function eventRecordOf(decoded: Decoded): EventRecord | undefined {
  const type = EVENT_TYPES[decoded.name];
  return type ? ({ type, value: decoded.value } as EventRecord) : undefined;
}

/** userId, else anonymousId: with the destination id, the key of the event's tasks. */
export function userKeyOf(event: EventRecord): string {
  return event.value.userId ?? event.value.anonymousId ?? '';
}

/** The Kafka key of a task: destinationId:userKey (delivery picks a destination's tasks out of a range by it). */
export function taskKey(destinationId: string, userKey: string): string {
  return `${destinationId}:${userKey}`;
}

/**
 * A task never attempted: the event (its webhook body already built) for one destination. Fan-out
 * writes it; delivery builds the same task from the ingest record when it runs a range fan-out held.
 */
export function freshTask(event: EventRecord, destinationId: string, body: string, createdAt: number): DeliveryTask {
  const { messageId, sourceId, receivedAt } = event.value;
  return {
    taskId: `${messageId}:${destinationId}`, messageId, sourceId, destinationId, eventType: event.type, userKey: userKeyOf(event), body,
    receivedAt, createdAt, attempt: 0, firstAttemptAt: null, deadline: null, notBefore: null,
    pendingUrls: null, lastStatus: null, lastError: null,
  };
}
