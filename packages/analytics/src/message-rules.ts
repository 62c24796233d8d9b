import { AnalyticsError } from './errors.js';
import type { CallType, JsonObject, Message } from './messages.js';
import { wireTimestamp } from './timestamps.js';

/**
 * One call → the message to queue, or an AnalyticsError. Pure: the time and the id generator come
 * in. The rules are the server's (docs/decisions/0001-wire-compatible-tracking-api.md and
 * 0002-tracking-api-limits-and-rejections.md), checked here so a bad call fails at the
 * caller instead of being dropped by the server later: userId or anonymousId (alias: userId and
 * previousId), track needs event, group needs groupId, at most 32 KB as JSON.
 */
export const MAX_MESSAGE_BYTES = 32 * 1024;

export interface Stamp {
  now: number;
  newMessageId: () => string;
}

export interface BuiltMessage {
  message: Message;
  /** The message as it goes into the batch body; serialised once, here. */
  json: string;
  bytes: number;
}

const isObject = (v: unknown): v is JsonObject =>
  typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof Date);

function invalid(type: CallType, field: string, what: string): AnalyticsError {
  return new AnalyticsError('INVALID_MESSAGE', `${type}: ${field} must be ${what}`, { field });
}

/** A string field; absent when undefined, null or '' (the server treats '' as absent too). */
function text(type: CallType, input: JsonObject, field: string): string | undefined {
  const v = input[field];
  if (v === undefined || v === null || v === '') return undefined;
  if (typeof v !== 'string') throw invalid(type, field, 'a string');
  return v;
}

function object(type: CallType, input: JsonObject, field: string): JsonObject | undefined {
  const v = input[field];
  if (v === undefined || v === null) return undefined;
  if (!isObject(v)) throw invalid(type, field, 'an object');
  return v;
}

function timestamp(type: CallType, input: JsonObject, now: number): string {
  const v = input.timestamp;
  if (v === undefined || v === null || v === '') return new Date(now).toISOString();
  const sent = wireTimestamp(v);
  if (sent !== undefined) return sent;
  const shown = typeof v === 'string' ? JSON.stringify(v.slice(0, 64)) : v instanceof Date ? '(an invalid or out-of-range Date)' : `(a ${typeof v})`;
  throw new AnalyticsError(
    'INVALID_TIMESTAMP',
    `${type}: timestamp ${shown} is not a time the server accepts; give a Date or an ISO 8601 string such as 2024-03-07T10:00:00Z (years 1000–9999)`,
    { field: 'timestamp' },
  );
}

function required(type: CallType, value: string | undefined, code: 'MISSING_EVENT' | 'MISSING_GROUP_ID' | 'MISSING_PREVIOUS_ID', field: string): string {
  if (value === undefined) throw new AnalyticsError(code, `${type} needs ${field}`, { field });
  return value;
}

export function buildMessage(type: CallType, input: unknown, stamp: Stamp): BuiltMessage {
  if (!isObject(input)) throw new AnalyticsError('INVALID_MESSAGE', `${type} needs a message object`);

  const userId = text(type, input, 'userId');
  const anonymousId = text(type, input, 'anonymousId');
  if (type === 'alias') {
    if (userId === undefined) throw new AnalyticsError('MISSING_USER_ID', 'alias needs userId (the new identity)', { field: 'userId' });
  } else if (userId === undefined && anonymousId === undefined) {
    throw new AnalyticsError('MISSING_USER_ID', `${type} needs userId or anonymousId`, { field: 'userId' });
  }

  // Only the fields of this call type are copied: unknown keys never reach the wire.
  const fields: Omit<Message, 'type' | 'messageId' | 'timestamp'> = { userId, anonymousId };
  switch (type) {
    case 'identify':
      fields.traits = object(type, input, 'traits');
      break;
    case 'track':
      fields.event = required(type, text(type, input, 'event'), 'MISSING_EVENT', 'event');
      fields.properties = object(type, input, 'properties');
      break;
    case 'page':
    case 'screen':
      fields.name = text(type, input, 'name');
      fields.category = text(type, input, 'category');
      fields.properties = object(type, input, 'properties');
      break;
    case 'group':
      fields.groupId = required(type, text(type, input, 'groupId'), 'MISSING_GROUP_ID', 'groupId');
      fields.traits = object(type, input, 'traits');
      break;
    case 'alias':
      fields.previousId = required(type, text(type, input, 'previousId'), 'MISSING_PREVIOUS_ID', 'previousId');
      break;
  }
  fields.context = object(type, input, 'context');
  fields.integrations = object(type, input, 'integrations') as Message['integrations'];

  const message = withoutUndefined({
    type,
    messageId: text(type, input, 'messageId') ?? stamp.newMessageId(),
    timestamp: timestamp(type, input, stamp.now),
    ...fields,
  });

  let json: string;
  try {
    json = JSON.stringify(message);
  } catch (cause) {
    throw new AnalyticsError('INVALID_MESSAGE', `${type}: the message cannot be serialised to JSON (${(cause as Error).message})`, { cause });
  }
  const bytes = Buffer.byteLength(json, 'utf8');
  if (bytes > MAX_MESSAGE_BYTES) {
    throw new AnalyticsError('MESSAGE_TOO_LARGE', `${type}: the message is ${bytes} bytes as JSON; the limit is ${MAX_MESSAGE_BYTES}`);
  }
  return { message, json, bytes };
}

// So the Message handed to events has no `key: undefined` entries (JSON drops them anyway).
function withoutUndefined(message: Message): Message {
  for (const key of Object.keys(message) as (keyof Message)[]) if (message[key] === undefined) delete message[key];
  return message;
}
