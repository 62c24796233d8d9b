import type { ConfigState } from '@switchyard/platform/config-view/config-state';
import { browserSettings, type BrowserEndpoint } from './browser-settings.js';
import { IngestError } from './request-body.js';

export interface SettingsDeps {
  config: ConfigState;
  /** Where browsers send calls (from INGEST_PUBLIC_URL). */
  browser: BrowserEndpoint;
  /** False until sources and write keys have been read to the end: a key cannot be judged yet. */
  configLoaded?: () => boolean;
}

/**
 * `GET /v1/projects/{writeKey}/settings`: the settings document for a valid write key of an
 * enabled source; 404 for an unknown key or a disabled source (analytics.js then stays unloaded
 * and sends nothing), 503 while the configuration is still loading (never a 404 for a good key).
 */
export function handleSettings(deps: SettingsDeps, writeKey: string): Record<string, unknown> {
  if (deps.configLoaded && !deps.configLoaded()) throw new IngestError(503, 'NOT_READY', 'the service is still loading its configuration; retry shortly');
  const source = deps.config.sourceForWriteKey(writeKey);
  if (!source) throw new IngestError(404, 'INVALID_WRITE_KEY', 'no source has this write key');
  if (!source.enabled) throw new IngestError(404, 'SOURCE_DISABLED', 'the source of this write key is disabled');
  return browserSettings(writeKey, deps.browser);
}
