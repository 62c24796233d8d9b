/**
 * The rules a call must keep wherever it enters the pipeline
 * (docs/decisions/0002-tracking-api-limits-and-rejections.md): ingest applies them to each call of
 * the HTTP tracking API, fan-out to each record produced straight to the ingest topic by another
 * Kafka producer (ARCHITECTURE.md, "Direct records"). One implementation, so both paths refuse the
 * same calls for the same reasons. Pure; the callers extract the fields from their own input (a
 * JSON call, a decoded Avro record) and measure its size their own way.
 */
export const CALL_TYPES = ['track', 'page', 'screen', 'identify', 'group', 'alias'] as const;
export type CallType = (typeof CALL_TYPES)[number];

/** At most 32 KB per call (the documents' limit), measured on the call as its sender wrote it. */
export const MAX_MESSAGE_BYTES = 32 * 1024;

export const REJECT_REASONS = [
  'not_an_object', 'unknown_type', 'missing_user_id', 'missing_event', 'missing_group_id',
  'missing_previous_id', 'invalid_field', 'invalid_timestamp', 'message_too_large',
] as const;
export type RejectReason = (typeof REJECT_REASONS)[number];

export interface RuleViolation { reason: RejectReason; message: string }

/**
 * The identifying and required fields of a call. Null and the empty string both mean absent.
 * `delete` is not a tracking API call (deletion requests come from the admin API); a delete record
 * produced directly must still name the user whose data goes.
 */
export interface CallFields {
  type: CallType | 'delete';
  userId: string | null;
  anonymousId: string | null;
  /** track */
  event?: string | null;
  /** group */
  groupId?: string | null;
  /** alias */
  previousId?: string | null;
}

/**
 * userId or anonymousId (alias: previousId, then userId; delete: userId); track needs `event`,
 * group `groupId`. The first rule broken, or null.
 */
export function callFieldsViolation(call: CallFields): RuleViolation | null {
  switch (call.type) {
    case 'alias':
      if (!call.previousId) return { reason: 'missing_previous_id', message: 'alias needs previousId' };
      if (!call.userId) return { reason: 'missing_user_id', message: 'alias needs userId' };
      return null;
    case 'delete':
      return call.userId ? null : { reason: 'missing_user_id', message: 'delete needs userId' };
    default:
      break;
  }
  if (!call.userId && !call.anonymousId) return { reason: 'missing_user_id', message: 'userId or anonymousId is required' };
  if (call.type === 'track' && !call.event) return { reason: 'missing_event', message: 'track needs event' };
  if (call.type === 'group' && !call.groupId) return { reason: 'missing_group_id', message: 'group needs groupId' };
  return null;
}

/** Times of a call (epoch ms) outside the years 1000–9999 are typos or overflow, not historical imports. */
export const MIN_CALL_TIME = Date.UTC(1000, 0, 1);
export const MAX_CALL_TIME = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

/** A time outside the years 1000–9999, or null. */
export function timeViolation(field: string, ms: number): RuleViolation | null {
  return ms >= MIN_CALL_TIME && ms <= MAX_CALL_TIME ? null : { reason: 'invalid_timestamp', message: `${field} ${ms} is outside the years 1000–9999` };
}

/** Over 32 KB, or null. */
export function sizeViolation(bytes: number): RuleViolation | null {
  return bytes > MAX_MESSAGE_BYTES ? { reason: 'message_too_large', message: `the call is ${bytes} bytes; the limit is ${MAX_MESSAGE_BYTES}` } : null;
}
