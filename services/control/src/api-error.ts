import { SwitchyardError } from '@switchyard/platform/errors';

/** An admin API refusal: status, stable code, message and, for validation, the offending field. */
export class ApiError extends SwitchyardError {
  readonly field: string | undefined;
  /** Fields a refusal adds to its body beside code and message (MISSING_SCOPE's `scope`). */
  readonly details: Readonly<Record<string, string>>;
  constructor(status: number, code: string, message: string, field?: string, details: Record<string, string> = {}) {
    super(code, message, { status });
    this.name = 'ApiError';
    this.field = field;
    this.details = details;
  }

  override toJSON(): { code: string; message: string; field?: string } {
    const body = { code: this.code, message: this.message, ...this.details };
    return this.field === undefined ? body : { ...body, field: this.field };
  }
}

export const notFound = (kind: 'source' | 'destination' | 'write key' | 'audience' | 'computed trait' | 'notification endpoint', id: string) =>
  new ApiError(404, `${kind.replace(' ', '_').toUpperCase()}_NOT_FOUND`, `no ${kind} ${JSON.stringify(id)}`);
