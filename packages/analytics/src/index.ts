// Public API of @switchyard/analytics.
export { Analytics, createClient, type AnalyticsEvents, type SentBatch } from './analytics.js';
export type { Clock, Timer } from './clock.js';
export type { Logger } from './debug-log.js';
export { AnalyticsError, ERROR_CODES, type AnalyticsErrorCode, type AnalyticsErrorDetails } from './errors.js';
export { MAX_BODY_BYTES } from './batch-body.js';
export { MAX_MESSAGE_BYTES } from './message-rules.js';
export type {
  AliasMessage,
  Callback,
  CallFields,
  CallType,
  GroupMessage,
  IdentifyMessage,
  Identity,
  Integrations,
  JsonObject,
  Message,
  PageMessage,
  ScreenMessage,
  TrackMessage,
} from './messages.js';
export { DEFAULTS, type AnalyticsOptions } from './options.js';
export { LIBRARY_NAME, LIBRARY_VERSION } from './version.js';
