import type { CallType } from './event-rules.js';

/**
 * Every path official clients use, and what each carries
 * (docs/decisions/0001-wire-compatible-tracking-api.md).
 */
export const ROUTES: ReadonlyArray<readonly [path: string, route: 'batch' | CallType]> = [
  ['/v1/batch', 'batch'], ['/v1/import', 'batch'], ['/v1/b', 'batch'],
  ['/v1/identify', 'identify'], ['/v1/i', 'identify'],
  ['/v1/track', 'track'], ['/v1/t', 'track'],
  ['/v1/page', 'page'], ['/v1/p', 'page'],
  ['/v1/screen', 'screen'], ['/v1/s', 'screen'],
  ['/v1/group', 'group'], ['/v1/g', 'group'],
  ['/v1/alias', 'alias'], ['/v1/a', 'alias'],
];

/** The analytics.js settings document of a write key (browser-settings.ts). */
export const SETTINGS_PATH = '/v1/projects/:writeKey/settings';
