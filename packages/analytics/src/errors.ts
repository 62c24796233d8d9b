/**
 * The error catalogue. Every refusal and every delivery failure is an AnalyticsError with a stable
 * `code` from this table; the README lists the same codes (errors.test.ts keeps them in sync).
 *
 * `thrown`: the call (or the constructor) throws it synchronously and nothing is queued.
 * `delivered`: the call was accepted; the error reaches its callback and the `error` event later.
 */
export const ERROR_CODES = {
  INVALID_OPTION: { kind: 'thrown', retriable: false, summary: 'a constructor option has the wrong type or range' },
  MISSING_WRITE_KEY: { kind: 'thrown', retriable: false, summary: 'the write key is missing or empty' },
  INVALID_MESSAGE: { kind: 'thrown', retriable: false, summary: 'the message is not an object, a field has the wrong type, or it cannot be serialised to JSON' },
  MISSING_USER_ID: { kind: 'thrown', retriable: false, summary: 'neither userId nor anonymousId (alias: no userId)' },
  MISSING_PREVIOUS_ID: { kind: 'thrown', retriable: false, summary: 'alias without previousId' },
  MISSING_EVENT: { kind: 'thrown', retriable: false, summary: 'track without event' },
  MISSING_GROUP_ID: { kind: 'thrown', retriable: false, summary: 'group without groupId' },
  INVALID_TIMESTAMP: { kind: 'thrown', retriable: false, summary: 'timestamp is not a Date or date string the server accepts (ISO 8601, or a date with a month or zone name; years 1000–9999)' },
  MESSAGE_TOO_LARGE: { kind: 'thrown', retriable: false, summary: 'the message is over 32 KB as JSON' },
  QUEUE_FULL: { kind: 'thrown', retriable: true, summary: 'maxQueueSize messages are already waiting or in flight' },
  CLIENT_CLOSED: { kind: 'thrown', retriable: false, summary: 'close() was called' },
  HTTP_ERROR: { kind: 'delivered', retriable: false, summary: 'the server answered a non-2xx status (a 4xx other than 429 at once, else after the last retry)' },
  NETWORK_ERROR: { kind: 'delivered', retriable: true, summary: 'the connection failed on the last attempt' },
  TIMEOUT: { kind: 'delivered', retriable: true, summary: 'no complete response within timeoutMs on the last attempt' },
  MESSAGE_REJECTED: { kind: 'delivered', retriable: false, summary: 'the server accepted the batch but refused this message (listed in its `rejected`)' },
} as const satisfies Record<string, { kind: 'thrown' | 'delivered'; retriable: boolean; summary: string }>;

export type AnalyticsErrorCode = keyof typeof ERROR_CODES;

export interface AnalyticsErrorDetails {
  cause?: unknown;
  /** The message field at fault (validation errors). */
  field?: string;
  /** The HTTP status of the last response (HTTP_ERROR). */
  status?: number;
  /** How many requests were made for the batch (delivery errors). */
  attempts?: number;
  /** Overrides the catalogue, e.g. an HTTP_ERROR for a 503 is retriable, a 400 is not. */
  retriable?: boolean;
}

export class AnalyticsError extends Error {
  readonly code: AnalyticsErrorCode;
  /** Whether sending the same message again later could succeed. */
  readonly retriable: boolean;
  readonly field: string | undefined;
  readonly status: number | undefined;
  readonly attempts: number | undefined;

  constructor(code: AnalyticsErrorCode, message: string, details: AnalyticsErrorDetails = {}) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.name = 'AnalyticsError';
    this.code = code;
    this.retriable = details.retriable ?? ERROR_CODES[code].retriable;
    this.field = details.field;
    this.status = details.status;
    this.attempts = details.attempts;
  }
}
