// The calls a caller makes (input shapes) and the message the client queues and sends.

export type JsonObject = Record<string, unknown>;

export type CallType = 'identify' | 'track' | 'page' | 'screen' | 'group' | 'alias';

/**
 * Destination selection: `All` or a destination's published name (case sensitive) → enabled.
 * All destinations are enabled by default; `All: false` disables every one not set to true.
 */
export type Integrations = Record<string, boolean | JsonObject>;

/** Who the call is about: userId, anonymousId, or both. */
export type Identity = { userId: string; anonymousId?: string } | { userId?: string; anonymousId: string };

export interface CallFields {
  /** Kept as given; a random UUID otherwise. Receivers drop duplicates by it. */
  messageId?: string;
  /**
   * When the call happened; now when omitted. Set it to import past data. A Date, or a string:
   * ISO 8601 (offsets and any fraction digits allowed; no zone means UTC) or a date with a month
   * or zone name ('March 7, 2024'). Sent as toISOString() gives it; years 1000–9999.
   */
  timestamp?: Date | string;
  /** Extra facts about the call that are not attributes of the user. */
  context?: JsonObject;
  integrations?: Integrations;
}

export type IdentifyMessage = Identity & CallFields & { traits?: JsonObject };
export type TrackMessage = Identity & CallFields & { event: string; properties?: JsonObject };
/** Page properties: `url`, `title`, `referrer`, `path` are recognised; others are allowed. */
export type PageMessage = Identity & CallFields & { name?: string; category?: string; properties?: JsonObject };
export type ScreenMessage = Identity & CallFields & { name?: string; category?: string; properties?: JsonObject };
export type GroupMessage = Identity & CallFields & { groupId: string; traits?: JsonObject };
/** userId is the new identity, previousId the one aliased from. */
export type AliasMessage = CallFields & { userId: string; previousId: string; anonymousId?: string };

/** A validated call as queued and sent: type, messageId and timestamp always set. */
export interface Message {
  type: CallType;
  messageId: string;
  /** ISO 8601 as toISOString() gives it (`2024-03-07T10:00:00.000Z`): the caller's time, or now. */
  timestamp: string;
  userId?: string;
  anonymousId?: string;
  previousId?: string;
  groupId?: string;
  event?: string;
  name?: string;
  category?: string;
  properties?: JsonObject;
  traits?: JsonObject;
  context?: JsonObject;
  integrations?: Integrations;
}

/** Called once per call: no argument when the server accepted it, an AnalyticsError when not. */
export type Callback = (err?: Error) => void;
