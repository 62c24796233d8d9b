import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConfigState } from '@switchyard/platform/config-view/config-state';
import type { HttpError } from '@switchyard/platform/http/error-catalogue';
import { settingsErrors, trackingErrors } from './tracking-errors.js';
import { sourceOfWriteKey, UNKNOWN_KEY_WAIT_MS, type WriteKeyDeps } from './write-key-auth.js';

const REFUSALS = trackingErrors;
const source = (id: string, enabled: boolean, writeKeys: string[]) => ({ kind: 'source' as const, value: { id, name: id, enabled, writeKeys, createdAt: 0, updatedAt: 0 } });

function config(): ConfigState {
  const state = new ConfigState();
  state.apply('source:on', source('on', true, ['wk_on']));
  state.apply('source:off', source('off', false, ['wk_off']));
  return state;
}

/** A view that answers `current` after `delayMs`, applying `onCatchUp` to the state first (records read meanwhile). */
function view(current: boolean, onCatchUp?: (state: ConfigState) => void) {
  const calls: Array<{ since: number; timeoutMs: number }> = [];
  const deps = (state = config()): WriteKeyDeps => ({
    config: state,
    configCurrent: async (since, timeoutMs) => { calls.push({ since, timeoutMs }); if (current) onCatchUp?.(state); return current; },
  });
  return { calls, deps };
}

const refusedWith = (status: number, code: string) => (e: HttpError) => e.status === status && e.code === code;

describe('sourceOfWriteKey: refuse a key only when the configuration is known to be current', () => {
  it('a known key of an enabled source is accepted without waiting for the view', async () => {
    const { calls, deps } = view(false);
    assert.equal((await sourceOfWriteKey(deps(), 'wk_on', 1000, REFUSALS)).id, 'on');
    assert.deepEqual(calls, []);
  });

  it('an unknown key with a current view → 401 INVALID_WRITE_KEY, after asking for currency as of the request', async () => {
    const { calls, deps } = view(true);
    await assert.rejects(sourceOfWriteKey(deps(), 'wk_nope', 1000, REFUSALS), refusedWith(401, 'INVALID_WRITE_KEY'));
    assert.deepEqual(calls, [{ since: 1000, timeoutMs: UNKNOWN_KEY_WAIT_MS }]);
  });

  it('a disabled source with a current view → 401 SOURCE_DISABLED', async () => {
    await assert.rejects(sourceOfWriteKey(view(true).deps(), 'wk_off', 1000, REFUSALS), refusedWith(401, 'SOURCE_DISABLED'));
  });

  it('an unknown key while the view is behind → 503 CONFIG_BEHIND (clients retry), never 401', async () => {
    await assert.rejects(sourceOfWriteKey(view(false).deps(), 'wk_nope', 1000, REFUSALS), refusedWith(503, 'CONFIG_BEHIND'));
  });

  it('a disabled source while the view is behind → 503 CONFIG_BEHIND (it may have been enabled meanwhile)', async () => {
    await assert.rejects(sourceOfWriteKey(view(false).deps(), 'wk_off', 1000, REFUSALS), refusedWith(503, 'CONFIG_BEHIND'));
  });

  it('a source created a moment before the request: found once the view caught up, and accepted', async () => {
    const { deps } = view(true, (state) => state.apply('source:new', source('new', true, ['wk_new'])));
    assert.equal((await sourceOfWriteKey(deps(), 'wk_new', 1000, REFUSALS)).id, 'new');
  });

  it('a source enabled a moment before the request: accepted once the view caught up', async () => {
    const { deps } = view(true, (state) => state.apply('source:off', source('off', true, ['wk_off'])));
    assert.equal((await sourceOfWriteKey(deps(), 'wk_off', 1000, REFUSALS)).id, 'off');
  });

  it('503 NOT_READY before the configuration was loaded, whatever the key', async () => {
    await assert.rejects(sourceOfWriteKey({ ...view(true).deps(), configLoaded: () => false }, 'wk_on', 1000, REFUSALS), refusedWith(503, 'NOT_READY'));
  });

  it('without a currency check (no view to ask), refusals are immediate as before', async () => {
    await assert.rejects(sourceOfWriteKey({ config: config() }, 'wk_nope', 1000, settingsErrors), refusedWith(404, 'INVALID_WRITE_KEY'));
  });
});
