import { ErrorCatalogue, type ErrorArgs, type HttpError } from '@switchyard/platform/http/error-catalogue';
import { serverErrors } from '@switchyard/platform/http/server-errors';

/**
 * The admin API's error catalogue: every code it answers, with its status and message. A catalogue
 * of its own beside the tracking API's (services/ingest/src/tracking-errors.ts) rather than one
 * shared list: the two APIs have different clients, docs and compatibility promises, and a code
 * may mean something else in each (INVALID_FIELD, CONFIG_BEHIND). What both answer from the server
 * itself comes from one place (`serverErrors`). docs/admin-api.md ("Errors") lists every code, and
 * the OpenAPI document's Error.code is their enum (admin-errors.test.ts checks both).
 */

/** A refusal of a body the validation gave the message of (parseBody: `settings.webhooks[0].url: …`). */
const invalid = { status: 400, message: ({ problem }: { problem: string }) => problem };
const noSuch = (kind: string) => ({ status: 404, message: ({ id }: { id: string }) => `no ${kind} ${JSON.stringify(id)}` });

export const adminErrorTable = {
  ...serverErrors,

  // Authentication and scopes (auth.ts, scopes.ts).
  UNAUTHORIZED: { status: 401, message: ({ reason }: { reason: 'missing' | 'invalid' }) => (reason === 'invalid' ? 'the admin token is not valid' : 'missing Authorization: Bearer <admin token>') },
  MISSING_SCOPE: { status: 403, message: ({ scope }: { scope: string }) => `this token lacks the ${scope} scope this request needs`, details: ({ scope }: { scope: string }) => ({ scope }) },
  SOURCE_NOT_ALLOWED: { status: 403, message: 'this token is limited to other sources' },
  TOO_MANY_AUTH_FAILURES: { status: 429, message: ({ retryAfterSeconds }: { retryAfterSeconds: number }) => `too many failed authentications from this address: try again in ${retryAfterSeconds} s` },
  CONFIG_BEHIND: { status: 503, message: 'the admin tokens could not be checked against the configuration in time: try again' },
  NO_ACCESS_DECIDED: { status: 500, message: 'no access was decided for this request' },

  // Request bodies (api-schemas.ts: zod's checks and the custom ones, each with its code).
  INVALID_FIELD: invalid,
  UNKNOWN_FIELD: { status: 400, message: ({ names }: { names: readonly string[] }) => `unknown field ${names.join(', ')}` },
  NO_WEBHOOKS: invalid,
  TOO_MANY_WEBHOOKS: invalid,
  UNSUPPORTED_TYPE: invalid,
  INVALID_URL: invalid,
  INVALID_URL_SCHEME: invalid,
  BLOCKED_ADDRESS: invalid,
  INVALID_HEADER: invalid,
  RESERVED_HEADER: invalid,
  INVALID_FILTER: invalid,
  INVALID_RETRY_POLICY: invalid,
  INVALID_CLIENT_CERTIFICATE: invalid,
  INVALID_CONDITION: invalid,
  INVALID_DEFINITION: invalid,
  INVALID_RANGE: { status: 400, message: 'from must be before to' },

  // Requests the configuration refuses.
  UNKNOWN_SOURCE: { status: 400, message: ({ id }: { id: string }) => `no source ${JSON.stringify(id)}` },
  DUPLICATE_ID: { status: 400, message: ({ kind, id }: { kind: string; id: string }) => `${kind} ${id} exists` },
  DUPLICATE_PROPERTY: { status: 400, message: ({ property }: { property: string }) => `the source already has a property ${property}` },
  SIGNING_NOT_ENABLED: { status: 400, message: 'Standard Webhooks signing is off for this destination: set signing.standard to true first' },
  DESTINATION_DISABLED: { status: 400, message: ({ id }: { id: string }) => `destination ${id} is disabled: enable it to replay into it` },
  TOO_MANY_TOKENS: { status: 400, message: ({ max }: { max: number }) => `at most ${max} tokens: revoke some first` },
  REPLAY_FINISHED: { status: 409, message: ({ id, state }: { id: string; state: string }) => `replay ${id} is ${state}` },
  LIVE_UNAVAILABLE: { status: 503, message: ({ reason }: { reason: string }) => `${reason}: try again later` },

  // Unknown ids.
  SOURCE_NOT_FOUND: noSuch('source'),
  WRITE_KEY_NOT_FOUND: { status: 404, message: 'the source has no such write key' },
  DESTINATION_NOT_FOUND: noSuch('destination'),
  NOTIFICATION_ENDPOINT_NOT_FOUND: noSuch('notification endpoint'),
  REPLAY_NOT_FOUND: { status: 404, message: ({ id, destinationId }: { id: string; destinationId: string }) => `no replay ${id} of destination ${destinationId}` },
  AUDIENCE_NOT_FOUND: noSuch('audience'),
  COMPUTED_TRAIT_NOT_FOUND: noSuch('computed trait'),
  DEAD_LETTER_NOT_FOUND: noSuch('dead letter'),
  TOKEN_NOT_FOUND: noSuch('token'),
  MESSAGE_NOT_FOUND: {
    status: 404,
    message: ({ id, window, max }: { id: string; window: string; max: number }) =>
      `no record of message ${JSON.stringify(id)} in the last ${window}: it may be older, not have reached fan-out yet, or have been forgotten (the index keeps at most ${max} messages)`,
  },
};

export const adminErrors = new ErrorCatalogue(adminErrorTable);

export type AdminErrorCode = keyof typeof adminErrorTable;

/** A refusal of the admin API: `throw apiError('SOURCE_NOT_FOUND', { id })`. */
export function apiError<C extends AdminErrorCode>(code: C, ...args: ErrorArgs<(typeof adminErrorTable)[C]>): HttpError {
  return adminErrors.error(code, ...args);
}

/** The codes of refused request bodies, whose message is the validation's (api-schemas.ts, withCode). */
export type ValidationCode = {
  [C in AdminErrorCode]: (typeof adminErrorTable)[C] extends { message: (params: { problem: string }) => string } ? C : never;
}[AdminErrorCode];
