import type { FastifyRequest } from 'fastify';
import { SwitchyardError } from '../errors.js';
import { ErrorCatalogue, HttpError, type ErrorEntry } from './error-catalogue.js';

/**
 * The codes the HTTP server answers by itself, before or around any route: no such route, a body
 * it cannot read, a failure no route turned into a refusal, shutdown. Every API's catalogue
 * includes them (and may give them its own status or message: the tracking API answers
 * BODY_TOO_LARGE with 400, which clients do not retry), so these answers are in its docs too.
 */
export const serverErrors = {
  NOT_FOUND: { status: 404, message: ({ method, path }: { method: string; path: string }) => `no route for ${method} ${path}` },
  BAD_REQUEST: { status: 400, message: ({ problem }: { problem: string }) => problem },
  INVALID_JSON: { status: 400, message: ({ problem }: { problem?: string }) => (problem ? `the body is not valid JSON: ${problem}` : 'the body is not valid JSON') },
  BODY_TOO_LARGE: { status: 413, message: ({ limitBytes }: { limitBytes: number }) => `the body is over ${limitBytes / 1024} KB` },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, message: ({ contentType }: { contentType: string }) => `Content-Type ${JSON.stringify(contentType)} is not accepted: send JSON as application/json` },
  INTERNAL: { status: 500, message: 'internal error' },
  UNAVAILABLE: { status: 503, message: 'a service this request needs is not answering: retry shortly' },
  SHUTTING_DOWN: { status: 503, message: 'this instance is shutting down: retry (another instance answers)' },
} satisfies Record<string, ErrorEntry<never>>;

/** What an API's catalogue must hold for the server to answer its own refusals from it. */
export type ServerErrorTable = typeof serverErrors;

/** The catalogue of a server with no API of its own (the ops server of fan-out, delivery, audiences). */
export const serverErrorCatalogue = new ErrorCatalogue(serverErrors);

/** fastify's errors by code, as this catalogue's (fastify/lib/errors.js names them). */
const FASTIFY_CODES = {
  FST_ERR_CTP_BODY_TOO_LARGE: 'BODY_TOO_LARGE',
  FST_ERR_CTP_INVALID_JSON_BODY: 'INVALID_JSON',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'INVALID_JSON',
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'UNSUPPORTED_MEDIA_TYPE',
} as const;

/**
 * The refusal to answer for an error that reached the server's error handler: an HttpError as it
 * is; fastify's own by the table above, any other 4xx as BAD_REQUEST with fastify's message; a
 * Switchyard failure that says "retry" (the schema registry unreachable) as UNAVAILABLE; anything
 * else as INTERNAL, with the error kept as its cause for the log.
 */
export function refusalOf(errors: ErrorCatalogue<ServerErrorTable>, error: unknown, req: FastifyRequest): HttpError {
  if (error instanceof HttpError) return error;
  const { code, statusCode, message } = error as { code?: unknown; statusCode?: unknown; message?: unknown };
  const known = typeof code === 'string' && Object.hasOwn(FASTIFY_CODES, code) ? FASTIFY_CODES[code as keyof typeof FASTIFY_CODES] : undefined;
  if (known === 'BODY_TOO_LARGE') return errors.error(known, { limitBytes: req.routeOptions.bodyLimit, cause: error });
  if (known === 'INVALID_JSON') return errors.error(known, { cause: error });
  if (known === 'UNSUPPORTED_MEDIA_TYPE') return errors.error(known, { contentType: req.headers['content-type'] ?? '', cause: error });
  if (error instanceof SwitchyardError) return errors.error(error.retriable || error.status === 503 ? 'UNAVAILABLE' : 'INTERNAL', { cause: error });
  if (typeof statusCode === 'number' && statusCode >= 400 && statusCode < 500) {
    return errors.error('BAD_REQUEST', { problem: typeof message === 'string' && message ? message : 'the request cannot be read', cause: error });
  }
  return errors.error('INTERNAL', { cause: error });
}
