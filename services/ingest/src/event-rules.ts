import type { AvroRecordTypes } from '@switchyard/platform/codec/avro-codec';
import { CALL_TYPES, callFieldsViolation, sizeViolation, type CallType, type RejectReason } from '@switchyard/platform/calls/call-rules';
import { parseTimestamp } from './timestamps.js';

/**
 * One call of the tracking API → the Avro record of its type, or the reason it is refused.
 * Pure: the request's facts (source, arrival time, batch-level context, client IP) come in as
 * arguments. Rules (docs/decisions/0001-wire-compatible-tracking-api.md,
 * 0002-tracking-api-limits-and-rejections.md, 0012-ingest-topic-records.md and
 * 0013-message-ids-and-timestamps.md): a known type; the call rules shared with fan-out's
 * check of directly produced records (`@switchyard/platform/calls/call-rules`: userId or
 * anonymousId; track needs `event`, group `groupId`, alias `previousId` and `userId`; at most
 * 32 KB as sent); fields of the right kinds; batch-level context and integrations merged in (the
 * event's own keys win); `messageId` kept or generated; `originalTimestamp` is the client's time
 * and `timestamp` is corrected for the client's clock skew.
 */
export { CALL_TYPES, MAX_MESSAGE_BYTES, type CallType, type RejectReason } from '@switchyard/platform/calls/call-rules';

export type EventSchema = `io.switchyard.event.${'Track' | 'Page' | 'Screen' | 'Identify' | 'Group' | 'Alias'}`;

export type Accepted = {
  [S in EventSchema]: { ok: true; type: CallType; schema: S; record: AvroRecordTypes[S]; key: string; messageId: string };
}[EventSchema];
export type Rejected = { ok: false; reason: RejectReason; message: string; messageId: string | null; type: string | null };

export interface RequestFacts {
  sourceId: string;
  receivedAt: number;
  /** Batch-level fields, merged into every event. */
  context?: Record<string, unknown> | undefined;
  integrations?: Record<string, unknown> | undefined;
  sentAt?: unknown;
  /** The client address, used for context.ip when the call has none. */
  ip?: string | undefined;
  newMessageId: () => string;
}

type Json = Record<string, unknown>;

class Refusal extends Error {
  constructor(readonly reason: RejectReason, message: string) { super(message); }
}

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * A number sent where text is expected, as text. An integer beyond 2^53 has already lost digits in
 * JSON parsing (9007199254740993 reads as ...992), so it is refused rather than stored as a
 * different id.
 */
function numberText(field: string, v: number): string {
  if (!Number.isFinite(v)) throw new Refusal('invalid_field', `${field} must be a string`);
  if (Number.isInteger(v) && !Number.isSafeInteger(v)) throw new Refusal('invalid_field', `${field} is a number beyond 2^53 whose digits cannot be kept; send it as a string`);
  return String(v);
}

/** A string identifier: strings as they are, numbers as text (some clients send numeric ids); empty = absent. */
function id(raw: Json, field: string): string | null {
  const v = raw[field];
  if (v === undefined || v === null || v === '') return null;
  if (typeof v === 'string') return v;
  if (typeof v === 'number') return numberText(field, v);
  throw new Refusal('invalid_field', `${field} must be a string`);
}

function optionalString(raw: Json, field: string): string | null {
  const v = raw[field];
  if (v === undefined || v === null) return null;
  if (typeof v === 'string') return v;
  if (typeof v === 'number') return numberText(field, v);
  throw new Refusal('invalid_field', `${field} must be a string`);
}

function optionalObject(raw: Json, field: string): Json | undefined {
  const v = raw[field];
  if (v === undefined || v === null) return undefined;
  if (!isObject(v)) throw new Refusal('invalid_field', `${field} must be an object`);
  return v;
}

function jsonText(v: Json | undefined): string | null {
  return v === undefined ? null : JSON.stringify(v);
}

function time(raw: Json, field: string): number | undefined {
  const v = raw[field];
  if (v === undefined || v === null || v === '') return undefined;
  const ms = parseTimestamp(v);
  if (ms === undefined) throw new Refusal('invalid_timestamp', `${field} ${JSON.stringify(v).slice(0, 64)} is not an ISO 8601 time`);
  return ms;
}

export function normalizeEvent(raw: unknown, pathType: CallType | undefined, facts: RequestFacts): Accepted | Rejected {
  if (!isObject(raw)) return { ok: false, reason: 'not_an_object', message: 'each call must be a JSON object', messageId: null, type: null };
  const rawType = pathType ?? raw.type;
  let messageId: string | null = null;
  try {
    messageId = id(raw, 'messageId');
  } catch { /* reported below with the rest */ }
  const type = typeof rawType === 'string' ? rawType : null;
  try {
    if (!CALL_TYPES.includes(type as CallType)) throw new Refusal('unknown_type', `type ${JSON.stringify(rawType ?? null)} is not one of ${CALL_TYPES.join(', ')}`);
    // Measured as the client sent it, before anything is added.
    const tooLarge = sizeViolation(Buffer.byteLength(JSON.stringify(raw), 'utf8'));
    if (tooLarge) throw new Refusal(tooLarge.reason, tooLarge.message);
    return build(type as CallType, raw, facts, messageId ?? id(raw, 'messageId') ?? facts.newMessageId());
  } catch (err) {
    if (err instanceof Refusal) return { ok: false, reason: err.reason, message: err.message, messageId, type };
    throw err;
  }
}

function build(type: CallType, raw: Json, facts: RequestFacts, messageId: string): Accepted {
  const userId = id(raw, 'userId');
  const anonymousId = id(raw, 'anonymousId');
  const previousId = type === 'alias' ? id(raw, 'previousId') : null;
  const event = type === 'track' ? optionalString(raw, 'event') : null;
  const groupId = type === 'group' ? id(raw, 'groupId') : null;
  const broken = callFieldsViolation({ type, userId, anonymousId, previousId, event, groupId });
  if (broken) throw new Refusal(broken.reason, broken.message);

  // The client's clock: its timestamp for the call, and when it sent the request.
  const original = time(raw, 'timestamp') ?? time(raw, 'originalTimestamp');
  const sentAt = time(raw, 'sentAt') ?? (facts.sentAt === undefined || facts.sentAt === null || facts.sentAt === '' ? undefined : time({ sentAt: facts.sentAt }, 'sentAt'));
  const timestamp = original !== undefined && sentAt !== undefined ? facts.receivedAt - (sentAt - original) : original ?? facts.receivedAt;

  const ownContext = optionalObject(raw, 'context');
  const context: Json = { ...facts.context, ...ownContext };
  if (context.ip === undefined && facts.ip) context.ip = facts.ip;
  const ownIntegrations = optionalObject(raw, 'integrations');
  const integrations = facts.integrations || ownIntegrations ? { ...facts.integrations, ...ownIntegrations } : undefined;

  const common = {
    messageId, sourceId: facts.sourceId, userId, anonymousId,
    timestamp, originalTimestamp: original ?? null, sentAt: sentAt ?? null, receivedAt: facts.receivedAt,
    context: Object.keys(context).length ? JSON.stringify(context) : null,
    integrations: jsonText(integrations),
  };
  const key = `${facts.sourceId}:${userId ?? anonymousId}`;
  const accepted = <S extends EventSchema>(schema: S, record: AvroRecordTypes[S]) => ({ ok: true as const, type, schema, record, key, messageId }) as Accepted;

  switch (type) {
    case 'track':
      return accepted('io.switchyard.event.Track', { ...common, event: event!, properties: jsonText(optionalObject(raw, 'properties')) });
    case 'page':
      return accepted('io.switchyard.event.Page', { ...common, name: optionalString(raw, 'name'), category: optionalString(raw, 'category'), properties: jsonText(optionalObject(raw, 'properties')) });
    case 'screen':
      return accepted('io.switchyard.event.Screen', { ...common, name: optionalString(raw, 'name'), category: optionalString(raw, 'category'), properties: jsonText(optionalObject(raw, 'properties')) });
    case 'identify':
      return accepted('io.switchyard.event.Identify', { ...common, traits: jsonText(optionalObject(raw, 'traits')) });
    case 'group':
      return accepted('io.switchyard.event.Group', { ...common, groupId: groupId!, traits: jsonText(optionalObject(raw, 'traits')) });
    case 'alias':
      return accepted('io.switchyard.event.Alias', { ...common, previousId: previousId! });
  }
}
