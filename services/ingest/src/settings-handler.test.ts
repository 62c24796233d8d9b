import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConfigState } from '@switchyard/platform/config-view/config-state';
import type { HttpError } from '@switchyard/platform/http/error-catalogue';
import { handleSettings, type SettingsDeps } from './settings-handler.js';

function setup(extra: Partial<SettingsDeps> = {}): SettingsDeps {
  const config = new ConfigState();
  config.apply('source:on', { kind: 'source', value: { id: 'on', name: 'On', enabled: true, writeKeys: ['wk_on'], createdAt: 0, updatedAt: 0 } });
  config.apply('source:off', { kind: 'source', value: { id: 'off', name: 'Off', enabled: false, writeKeys: ['wk_off'], createdAt: 0, updatedAt: 0 } });
  return { config, browser: { apiHost: 'ingest.example.com/v1', protocol: 'https' }, ...extra };
}

describe('handleSettings: the analytics.js settings of a write key', () => {
  it('a valid key of an enabled source gets the document naming this ingest', async () => {
    const doc = await handleSettings(setup(), 'wk_on') as { integrations: Record<string, unknown> };
    assert.deepEqual(doc.integrations['Segment.io'], { apiKey: 'wk_on', apiHost: 'ingest.example.com/v1', protocol: 'https' });
  });
  const refusals: Array<[key: string, code: string]> = [['wk_unknown', 'INVALID_WRITE_KEY'], ['wk_off', 'SOURCE_DISABLED'], ['', 'INVALID_WRITE_KEY']];
  for (const [key, code] of refusals) {
    it(`${JSON.stringify(key)} → 404 ${code}`, async () => {
      await assert.rejects(handleSettings(setup({ configCurrent: async () => true }), key), (e: HttpError) => e.status === 404 && e.code === code);
    });
  }
  it('503 NOT_READY while the configuration is loading, even for a key that will be valid', async () => {
    await assert.rejects(handleSettings(setup({ configLoaded: () => false }), 'wk_on'), (e: HttpError) => e.status === 503 && e.code === 'NOT_READY');
  });
  it('503 CONFIG_BEHIND, not 404, for an unknown key while the view is not known to be current', async () => {
    await assert.rejects(handleSettings(setup({ configCurrent: async () => false }), 'wk_new'), (e: HttpError) => e.status === 503 && e.code === 'CONFIG_BEHIND');
  });
});
