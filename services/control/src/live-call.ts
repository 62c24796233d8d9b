import type { Decoded } from '@switchyard/platform/codec/avro-codec';

/** One call as the debugger's live feed shows it (one SSE `call` event). */
export interface LiveCall {
  messageId: string;
  type: string;
  /** The track call's event, or the page/screen name; null for the other types. */
  name: string | null;
  userId: string | null;
  anonymousId: string | null;
  timestamp: string;
  receivedAt: string;
  /** The call as stored: JSON text fields parsed back into objects, times as ISO 8601. */
  call: Record<string, unknown>;
}

const EVENT_NAMESPACE = 'io.switchyard.event.';
/** Fields the ingest record keeps as JSON text (so the Avro schema stays free-form there). */
const JSON_FIELDS = new Set(['properties', 'traits', 'context', 'integrations']);
const TIME_FIELDS = new Set(['timestamp', 'originalTimestamp', 'sentAt', 'receivedAt']);

/** The ingest record's call type from its Avro name (io.switchyard.event.Track → track), or undefined for any other record. */
export function callType(schemaName: string): string | undefined {
  return schemaName.startsWith(EVENT_NAMESPACE) ? schemaName.slice(EVENT_NAMESPACE.length).toLowerCase() : undefined;
}

/** The live-feed view of a decoded ingest record; undefined for a record that is not a call. Pure. */
export function liveCall(decoded: Decoded): LiveCall | undefined {
  const type = callType(decoded.name);
  if (type === undefined) return undefined;
  const value = decoded.value as unknown as Record<string, unknown>;
  const call: Record<string, unknown> = { type };
  for (const [key, v] of Object.entries(value)) {
    if (JSON_FIELDS.has(key) && typeof v === 'string') call[key] = parseJson(v);
    else if (TIME_FIELDS.has(key) && typeof v === 'number') call[key] = new Date(v).toISOString();
    else call[key] = v;
  }
  const text = (k: string) => (typeof value[k] === 'string' ? (value[k] as string) : null);
  return {
    messageId: String(value['messageId']),
    type,
    name: type === 'track' ? text('event') : type === 'page' || type === 'screen' ? text('name') : null,
    userId: text('userId'),
    anonymousId: text('anonymousId'),
    timestamp: call['timestamp'] as string,
    receivedAt: call['receivedAt'] as string,
    call,
  };
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/**
 * The one Kafka key test that lets the tail skip other sources' records without decoding them:
 * ingest keys are `sourceId:user`. A record without a key is decoded and checked by its sourceId.
 */
export function keyMayBelongTo(key: Buffer | null, sourceIds: ReadonlySet<string>): boolean {
  if (key === null || key.length === 0) return true;
  const text = key.toString('utf8');
  const colon = text.indexOf(':');
  return colon < 0 || sourceIds.has(text.slice(0, colon));
}
