import type { RejectReason } from '@switchyard/platform/calls/call-rules';
import { ErrorCatalogue } from '@switchyard/platform/http/error-catalogue';
import { serverErrors } from '@switchyard/platform/http/server-errors';

/**
 * The tracking API's error catalogue: every code ingest answers, with its status and message. Its
 * own, apart from the admin API's (services/control/src/admin-errors.ts): tracking clients are
 * official analytics libraries whose behaviour hangs on the status alone (a 400 is dropped, a 5xx
 * or 429 retried: docs/decisions/0002-tracking-api-limits-and-rejections.md), so these statuses are
 * a wire contract the admin API does not share. docs/tracking-api.md ("Errors") lists every code
 * and the OpenAPI document's Error.code is their enum (tracking-errors.test.ts checks both).
 */

/** A call of a single-call path that breaks a rule: the code is its reason in upper case, the message the rule's. */
const callRefused = { status: 400, message: ({ problem }: { problem: string }) => problem };

/** Before a write key can be judged: the same on every path. */
const configurationPending = {
  NOT_READY: { status: 503, message: 'the service is still loading its configuration; retry shortly' },
  CONFIG_BEHIND: { status: 503, message: 'this write key is not known here yet and the configuration is not up to date (Kafka unreachable or catching up); retry shortly' },
};

const trackingErrorTable = {
  ...serverErrors,
  // 400, not 413: clients retry 413, and the same body cannot succeed.
  BODY_TOO_LARGE: { status: 400, message: ({ limitBytes, decompressed }: { limitBytes: number; decompressed?: boolean }) => `the ${decompressed ? 'decompressed ' : ''}body is over ${limitBytes / 1024} KB` },
  UNAVAILABLE: { status: 503, message: 'the event store is not accepting writes right now; retry later' },

  // The request as a whole: nothing is written.
  INVALID_UTF8: { status: 400, message: 'the body is not valid UTF-8' },
  NESTING_TOO_DEEP: { status: 400, message: ({ maxDepth }: { maxDepth: number }) => `the body nests deeper than ${maxDepth} levels` },
  INVALID_BODY: { status: 400, message: 'the body must be a JSON object' },
  INVALID_BATCH: { status: 400, message: ({ part }: { part?: 'context' | 'integrations' }) => (part ? `batch-level ${part} must be an object` : 'the body needs a "batch" array of calls') },
  REQUEST_TOO_LARGE: { status: 400, message: ({ limitBytes }: { limitBytes: number }) => `with batch-level context merged into each call and ids and times added, the request would write over ${limitBytes / 1024} KB; send fewer calls per request` },
  UNSUPPORTED_ENCODING: { status: 400, message: ({ encoding }: { encoding: string }) => `Content-Encoding ${JSON.stringify(encoding)} is not supported; use gzip, deflate, br or none` },
  INVALID_ENCODING: { status: 400, message: ({ encoding }: { encoding: string }) => `the body is not valid ${encoding} data` },

  // The call of a single-call path (in a batch, the same reasons are listed in `rejected` instead).
  NOT_AN_OBJECT: callRefused,
  UNKNOWN_TYPE: callRefused,
  MISSING_USER_ID: callRefused,
  MISSING_EVENT: callRefused,
  MISSING_GROUP_ID: callRefused,
  MISSING_PREVIOUS_ID: callRefused,
  INVALID_FIELD: callRefused,
  INVALID_TIMESTAMP: callRefused,
  MESSAGE_TOO_LARGE: callRefused,

  // The write key: a client drops a batch answered 401, so only for a key that is surely unknown (write-key-auth.ts).
  MISSING_WRITE_KEY: { status: 401, message: 'send the write key as the HTTP Basic user name or as writeKey in the body' },
  INVALID_WRITE_KEY: { status: 401, message: 'the write key is not valid' },
  SOURCE_DISABLED: { status: 401, message: 'the source of this write key is disabled' },
  ...configurationPending,
} satisfies Record<Uppercase<RejectReason>, typeof callRefused> & Record<string, unknown>;

/** The tracking paths' errors, and those the server answers by itself. */
export const trackingErrors = new ErrorCatalogue(trackingErrorTable);

/**
 * The settings document's (GET /v1/projects/{writeKey}/settings): an unknown key or a disabled
 * source is 404 there, and analytics.js then stays unloaded and sends nothing.
 */
export const settingsErrors = new ErrorCatalogue({
  INVALID_WRITE_KEY: { status: 404, message: 'no source has this write key' },
  SOURCE_DISABLED: { status: 404, message: 'the source of this write key is disabled' },
  ...configurationPending,
});

/** The code of a single call refused for `reason` (missing_event → MISSING_EVENT). */
export const callRefusalCode = (reason: RejectReason): Uppercase<RejectReason> => reason.toUpperCase() as Uppercase<RejectReason>;
