import type { LiveCall } from './live-call.js';

/**
 * What a `metadata` token sees of event data (docs/admin-api.md, "Tokens and scopes"): who, what
 * kind of call, when, and where it went — never its payload. An allow-list, so a field added to a
 * call later stays hidden until someone decides it is metadata. Pure.
 *
 * Judged route by route: the live feed's `call` (properties, traits, context, integrations) and
 * dead letters' `body` (the webhook body) and `responseExcerpt` (a receiver may echo the body) are
 * payloads. The message trace carries none (ids, types, times, statuses, error classes), nor do
 * usage counts, replays, audiences and computed traits (definitions, not data), sources and
 * destinations (configuration; their credentials are a separate rule: views.ts).
 */
export const CALL_METADATA_FIELDS: ReadonlySet<string> = new Set([
  'type', 'messageId', 'sourceId', 'userId', 'anonymousId', 'event', 'name', 'category', 'groupId', 'previousId', 'requestId',
  'timestamp', 'originalTimestamp', 'sentAt', 'receivedAt',
]);

/** A live call without its payload: `call` keeps only CALL_METADATA_FIELDS. */
export function liveCallMetadata(call: LiveCall): LiveCall {
  return { ...call, call: Object.fromEntries(Object.entries(call.call).filter(([key]) => CALL_METADATA_FIELDS.has(key))) };
}

/** A dead letter's view without the payload: no body, no response excerpt (null, so the shape stays). */
export function deadLetterMetadata<T extends { responseExcerpt: string | null; body?: string | null }>(letter: T): T {
  return 'body' in letter ? { ...letter, responseExcerpt: null, body: null } : { ...letter, responseExcerpt: null };
}
