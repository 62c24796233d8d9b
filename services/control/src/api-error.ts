import { SwitchyardError } from '@switchyard/platform/errors';

/** An admin API refusal: status, stable code, message and, for validation, the offending field. */
export class ApiError extends SwitchyardError {
  readonly field: string | undefined;
  constructor(status: number, code: string, message: string, field?: string) {
    super(code, message, { status });
    this.name = 'ApiError';
    this.field = field;
  }

  override toJSON(): { code: string; message: string; field?: string } {
    return this.field === undefined ? { code: this.code, message: this.message } : { code: this.code, message: this.message, field: this.field };
  }
}

export const notFound = (kind: 'source' | 'destination' | 'write key' | 'audience' | 'computed trait', id: string) =>
  new ApiError(404, `${kind.replace(' ', '_').toUpperCase()}_NOT_FOUND`, `no ${kind} ${JSON.stringify(id)}`);
