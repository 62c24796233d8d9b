import { browserSettings, type BrowserEndpoint } from './browser-settings.js';
import { settingsErrors } from './tracking-errors.js';
import { sourceOfWriteKey, type WriteKeyDeps } from './write-key-auth.js';

export interface SettingsDeps extends WriteKeyDeps {
  /** Where browsers send calls (from INGEST_PUBLIC_URL). */
  browser: BrowserEndpoint;
  clock?: () => number;
}

/**
 * `GET /v1/projects/{writeKey}/settings`: the settings document for a valid write key of an
 * enabled source; 404 for an unknown key or a disabled source (analytics.js then stays unloaded
 * and sends nothing), 503 while the configuration is still loading or not known to be up to date
 * (never a 404 for a good key: write-key-auth.ts).
 */
export async function handleSettings(deps: SettingsDeps, writeKey: string): Promise<Record<string, unknown>> {
  await sourceOfWriteKey(deps, writeKey, (deps.clock ?? Date.now)(), settingsErrors);
  return browserSettings(writeKey, deps.browser);
}
