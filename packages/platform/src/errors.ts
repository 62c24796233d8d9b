/**
 * The one base class for Switchyard's own errors: a stable machine-readable `code`, whether
 * retrying can help, the HTTP status it maps to when it reaches a client, and the cause.
 */
export class SwitchyardError extends Error {
  readonly code: string;
  readonly retriable: boolean;
  readonly status: number;

  constructor(code: string, message: string, opts: { retriable?: boolean; status?: number; cause?: unknown } = {}) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = 'SwitchyardError';
    this.code = code;
    this.retriable = opts.retriable ?? false;
    this.status = opts.status ?? 500;
  }

  toJSON(): { code: string; message: string } {
    return { code: this.code, message: this.message };
  }
}

/** Configuration from the environment is missing or malformed; lists every problem at once. */
export class ConfigError extends SwitchyardError {
  readonly problems: readonly string[];
  constructor(problems: readonly string[]) {
    super('CONFIG_INVALID', `invalid configuration:\n  - ${problems.join('\n  - ')}`);
    this.name = 'ConfigError';
    this.problems = problems;
  }
}

/** A record could not be encoded or decoded (unknown schema id, bad framing, schema mismatch). */
export class CodecError extends SwitchyardError {
  constructor(code: 'CODEC_BAD_FRAME' | 'CODEC_UNKNOWN_SCHEMA' | 'CODEC_DECODE' | 'CODEC_ENCODE', message: string, cause?: unknown) {
    super(code, message, { cause });
    this.name = 'CodecError';
  }
}

/**
 * The schema registry did not answer a lookup (refused, timed out, 5xx): the record may be fine,
 * so it must be read again later, never set aside as unreadable. Only the registry's "not found"
 * (404) makes a schema id unknown (CodecError CODEC_UNKNOWN_SCHEMA).
 */
export class RegistryUnavailableError extends SwitchyardError {
  constructor(message: string, cause?: unknown) {
    super('REGISTRY_UNAVAILABLE', message, { retriable: true, status: 503, cause });
    this.name = 'RegistryUnavailableError';
  }
}
