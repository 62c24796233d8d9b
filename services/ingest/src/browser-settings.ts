/**
 * The settings document analytics.js (`@segment/analytics-next`) fetches before it sends anything:
 * `GET <cdnURL>/v1/projects/<writeKey>/settings`. Pure: the write key and where browsers reach
 * this ingest in, the document out.
 *
 * What analytics.js does with it (read in its source, browser/index.ts and plugins/segmentio):
 * - `integrations["Segment.io"]` configures the one plugin that sends calls: `apiKey` becomes
 *   `writeKey` in every body and the HTTP Basic user name (without it calls carry no key),
 *   calls go to `${protocol}://${apiHost}/<t|p|i|g|a|s>` (batching: `/b`). `apiHost` has no
 *   scheme, and `protocol` defaults to https whatever the page's own protocol, so an http ingest
 *   must say so.
 * - Any other key under `integrations` would make it load destinations in the page (ajs-destination
 *   from the CDN); `remotePlugins`, `enabledMiddleware` and `middlewareSettings.routingRules` would
 *   load code from the CDN too; `legacyVideoPluginsEnabled` a video plugin chunk. All empty or off.
 * - `metrics.sampleRate` defaults to 1: without 0 here it posts its own usage metrics to
 *   api.segment.io every 30 s.
 */

/** How long browsers and caches may keep a settings document (a disabled source takes this long to stop new page loads). */
export const SETTINGS_MAX_AGE_SECONDS = 60;

/** Where analytics.js sends calls: `apiHost` is host[:port][/path]/v1 without a scheme. */
export interface BrowserEndpoint {
  apiHost: string;
  protocol: 'http' | 'https';
}

/**
 * The endpoint of a public base URL (INGEST_PUBLIC_URL): its scheme as `protocol`, its host, port
 * and path (a reverse proxy may serve ingest under a prefix) plus `/v1` as `apiHost`.
 */
export function browserEndpoint(publicUrl: string): BrowserEndpoint {
  const url = new URL(publicUrl);
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error(`${publicUrl}: expected an http or https URL`);
  if (url.username || url.password || url.search || url.hash) throw new Error(`${publicUrl}: expected no credentials, query or fragment`);
  const path = url.pathname.replace(/\/+$/, '');
  return { apiHost: `${url.host}${path}/v1`, protocol: url.protocol === 'https:' ? 'https' : 'http' };
}

/**
 * The public URL when none is configured: the address the service listens on, with a wildcard
 * address (0.0.0.0, ::) replaced by 127.0.0.1, which at least works for a browser on the same machine.
 */
export function defaultPublicUrl(host: string, port: number): string {
  const reachable = host === '0.0.0.0' || host === '::' || host === '' ? '127.0.0.1' : host;
  return `http://${reachable.includes(':') ? `[${reachable}]` : reachable}:${port}`;
}

/** The settings document for one valid, enabled write key. */
export function browserSettings(writeKey: string, endpoint: BrowserEndpoint): Record<string, unknown> {
  return {
    integrations: {
      'Segment.io': { apiKey: writeKey, apiHost: endpoint.apiHost, protocol: endpoint.protocol },
    },
    remotePlugins: [],
    enabledMiddleware: {},
    middlewareSettings: {},
    legacyVideoPluginsEnabled: false,
    metrics: { sampleRate: 0 },
    plan: {},
    edgeFunction: {},
    analyticsNextEnabled: true,
  };
}
