import { SwitchyardError } from '../errors.js';

/**
 * One code of an API's error catalogue: the status it is answered with and its message, fixed or a
 * function of the parameters that name the offending thing. `details` adds fields to the body beside
 * code and message (MISSING_SCOPE's `scope`).
 */
export interface ErrorEntry<P = never> {
  readonly status: number;
  readonly message: string | ((params: P) => string);
  readonly details?: (params: P) => Readonly<Record<string, string>>;
}

export type ErrorTable = Readonly<Record<string, ErrorEntry>>;

/** What a refusal may carry beside its parameters: the offending field (a path such as `settings.webhooks[0].url`) and the error behind it. */
export interface RefusalOptions {
  field?: string | undefined;
  cause?: unknown;
}

type ParamsOf<E> = E extends { message: (params: infer P) => string } ? P
  : E extends { details: (params: infer P) => unknown } ? P
  : undefined;

/** The arguments of `error(code, …)`: the entry's parameters (with the options) when its message needs them, else the options alone. */
export type ErrorArgs<E> = ParamsOf<E> extends undefined ? [options?: RefusalOptions] : [params: ParamsOf<E> & RefusalOptions];

/** The JSON body of every refusal: `{code, message}`, `field` for a validation, and the entry's details. */
export type ErrorBody = { code: string; message: string; field?: string } & Readonly<Record<string, string>>;

/** A refusal an HTTP API answers: a code of its catalogue with that code's status and message. */
export class HttpError extends SwitchyardError {
  readonly field: string | undefined;
  readonly details: Readonly<Record<string, string>>;

  constructor(code: string, status: number, message: string, opts: { field?: string | undefined; details?: Readonly<Record<string, string>>; cause?: unknown } = {}) {
    // 429 and 503 say "try again"; every other refusal stays one for the same request.
    super(code, message, { status, retriable: status === 429 || status === 503, cause: opts.cause });
    this.name = 'HttpError';
    this.field = opts.field;
    this.details = opts.details ?? {};
  }

  override toJSON(): ErrorBody {
    const body = { code: this.code, message: this.message, ...this.details };
    return this.field === undefined ? body : { ...body, field: this.field };
  }
}

/**
 * The errors one API answers, each code once with its status and message (as fastify keeps
 * lib/errors.js): routes build refusals with `error(code, params)`, never from literal codes, and
 * the catalogue's codes are what the docs' "Errors" table and the OpenAPI document's `code` enum
 * list (each API's tests check both).
 */
export class ErrorCatalogue<T extends ErrorTable> {
  readonly entries: T;
  readonly codes: readonly string[];

  constructor(entries: T) {
    this.entries = Object.freeze({ ...entries });
    this.codes = Object.freeze(Object.keys(entries));
  }

  error<C extends keyof T & string>(code: C, ...args: ErrorArgs<T[C]>): HttpError {
    const entry: ErrorEntry = this.entries[code]!;
    const params = (args[0] ?? {}) as RefusalOptions;
    const message = typeof entry.message === 'string' ? entry.message : entry.message(params as never);
    return new HttpError(code, entry.status, message, { field: params.field, details: entry.details?.(params as never), cause: params.cause });
  }
}
