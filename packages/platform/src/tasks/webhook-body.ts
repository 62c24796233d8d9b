import type { Alias, Delete, Group, Identify, Page, Screen, Track } from '../schemas/generated.js';

/**
 * The JSON body delivered to a webhook, per call type (docs/delivery.md,
 * docs/decisions/0004-webhook-body.md). Pure: one stored record in, one body out. Field
 * names are exactly the document's (alias uses `Previous ID` / `User ID`, delete has only `type`,
 * `userId`, `timestamp`); every other body has `version: 1` and `messageId` so receivers can drop
 * duplicates. Keys are inserted in a fixed order, because the text is what gets signed.
 */
export type EventRecord =
  | { type: 'track'; value: Track }
  | { type: 'page'; value: Page }
  | { type: 'screen'; value: Screen }
  | { type: 'identify'; value: Identify }
  | { type: 'group'; value: Group }
  | { type: 'alias'; value: Alias }
  | { type: 'delete'; value: Delete };

export type EventType = EventRecord['type'];

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A stored JSON text field as an object, or undefined when it is absent or not a JSON object. */
function parseObject(text: string | null): Json | undefined {
  if (text === null) return undefined;
  try {
    const parsed: unknown = JSON.parse(text);
    return isObject(parsed) ? parsed : undefined;
  } catch {
    return undefined;
  }
}

/** ISO 8601 UTC with milliseconds, as the document shows; always the record's corrected `timestamp`. */
const iso = (ms: number): string => new Date(ms).toISOString();

/** The fields every non-delete body starts with. */
function head(type: Exclude<EventType, 'delete'>, messageId: string): Json {
  return { version: 1, type, messageId };
}

/**
 * `userId` (null for an anonymous call: the document lists the key for these types), then
 * `anonymousId` when there is one. The document does not list anonymousId; we carry it so a call
 * made before the user was identified still names someone the receiver can attribute it to.
 */
function who(body: Json, record: { userId: string | null; anonymousId: string | null }): void {
  body['userId'] = record.userId;
  if (record.anonymousId !== null) body['anonymousId'] = record.anonymousId;
}

/** `timestamp`, then `context` when the call had one (screen always shows it: `{}` when none). */
function tail(body: Json, record: { timestamp: number; context: string | null }, alwaysContext = false): Json {
  body['timestamp'] = iso(record.timestamp);
  const context = parseObject(record.context);
  if (context !== undefined) body['context'] = context;
  else if (alwaysContext) body['context'] = {};
  return body;
}

export function webhookBody(event: EventRecord): Json {
  switch (event.type) {
    case 'track': {
      const r = event.value;
      const body = head('track', r.messageId);
      who(body, r);
      body['event'] = r.event;
      body['properties'] = parseObject(r.properties) ?? {};
      return tail(body, r);
    }
    case 'page': {
      const r = event.value;
      const body = head('page', r.messageId);
      who(body, r);
      body['properties'] = parseObject(r.properties) ?? {};
      if (r.name !== null) body['name'] = r.name;
      if (r.category !== null) body['category'] = r.category;
      return tail(body, r);
    }
    case 'screen': {
      // The document's table shows `name` and `context` for screen; it lists fields shown, not the
      // only ones allowed, so the call's own `properties` and `category` are delivered too (like
      // page), when it had them: a customer's data never vanishes on the way.
      const r = event.value;
      const body = head('screen', r.messageId);
      who(body, r);
      const properties = parseObject(r.properties);
      if (properties !== undefined) body['properties'] = properties;
      if (r.name !== null) body['name'] = r.name;
      if (r.category !== null) body['category'] = r.category;
      return tail(body, r, true);
    }
    case 'identify': {
      const r = event.value;
      const body = head('identify', r.messageId);
      who(body, r);
      body['traits'] = parseObject(r.traits) ?? {};
      return tail(body, r);
    }
    case 'group': {
      const r = event.value;
      const body = head('group', r.messageId);
      who(body, r);
      body['groupId'] = r.groupId;
      body['traits'] = parseObject(r.traits) ?? {};
      return tail(body, r);
    }
    case 'alias': {
      // The document's alias body has no `userId` key; its identities go under keys with spaces.
      const r = event.value;
      const body = head('alias', r.messageId);
      body['Previous ID'] = r.previousId;
      body['User ID'] = r.userId;
      return tail(body, r);
    }
    case 'delete': {
      // Exactly the three fields the document gives a deletion notification.
      const r = event.value;
      return { type: 'delete', userId: r.userId, timestamp: iso(r.timestamp) };
    }
    default: {
      const unknown: never = event;
      throw new Error(`unknown event type ${JSON.stringify((unknown as { type: unknown }).type)}`);
    }
  }
}

/**
 * The exact body text delivery sends and signs. JSON.stringify of the built body: a receiver that
 * parses it and stringifies it again gets the same text, hence the same signature.
 */
export function webhookBodyText(event: EventRecord): string {
  return JSON.stringify(webhookBody(event));
}
