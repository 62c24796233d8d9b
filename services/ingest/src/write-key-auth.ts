import type { ConfigState, Source } from '@switchyard/platform/config-view/config-state';
import type { ErrorCatalogue, ErrorEntry } from '@switchyard/platform/http/error-catalogue';

/**
 * How long a request with a write key this instance does not know (or of a disabled source) waits
 * for the config view to show it holds every source written before the request arrived. A current
 * idle view shows that within one or two of its polls (300 ms each); a source created a moment
 * before the request is then found and the request accepted.
 */
export const UNKNOWN_KEY_WAIT_MS = 2000;

export interface WriteKeyDeps {
  config: ConfigState;
  /** False until the configuration (sources, write keys) has been read to its end: 503 NOT_READY. */
  configLoaded?: () => boolean;
  /**
   * Resolves true once the configuration holds every record acknowledged by `since`, false if not
   * within timeoutMs (ConfigView.whenCurrent). Without it, the view is taken as current.
   */
  configCurrent?: (since: number, timeoutMs: number) => Promise<boolean>;
}

/** The refusals of one endpoint, from its catalogue: the tracking API answers 401, the settings document 404 (tracking-errors.ts). */
export type Refusals = ErrorCatalogue<Record<'NOT_READY' | 'CONFIG_BEHIND' | 'INVALID_WRITE_KEY' | 'SOURCE_DISABLED', ErrorEntry>>;

/**
 * The enabled source of a write key, or a refusal. A key is refused as unknown or disabled only
 * once the configuration is known to hold every source written before the request (`receivedAt`):
 * a client drops its events on 401, so a key this instance has not read yet (its view behind after
 * a broker was lost, or the source created a moment ago) gets 503 CONFIG_BEHIND with Retry-After,
 * which clients retry.
 */
export async function sourceOfWriteKey(deps: WriteKeyDeps, writeKey: string, receivedAt: number, refusals: Refusals): Promise<Source> {
  if (deps.configLoaded && !deps.configLoaded()) throw refusals.error('NOT_READY');
  let source = deps.config.sourceForWriteKey(writeKey);
  if (source?.enabled) return source;
  if (deps.configCurrent) {
    if (!(await deps.configCurrent(receivedAt, UNKNOWN_KEY_WAIT_MS))) {
      throw refusals.error('CONFIG_BEHIND');
    }
    source = deps.config.sourceForWriteKey(writeKey);
    if (source?.enabled) return source;
  }
  if (!source) throw refusals.error('INVALID_WRITE_KEY');
  throw refusals.error('SOURCE_DISABLED');
}
