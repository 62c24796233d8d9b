// switchyard replays, run against a fake admin API.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { run } from './run.js';
import { api, cli, ok, sent, TOKEN, useFakeAdminApi } from './test-support/cli-harness.js';

useFakeAdminApi();

describe('replays', () => {
  const replay = (over: Record<string, unknown> = {}) => ({
    id: 'rpl_1', destinationId: 'dst_1', state: 'running', from: '2025-01-10T10:00:00.000Z', to: '2025-01-10T11:00:00.000Z', filter: null, rate: 500,
    createdAt: '2025-01-10T12:00:00.000Z', cancelRequestedAt: null, total: 10000, scanned: 2500, matched: 2000, enqueued: 2000, progress: 0.25,
    recordsPerSecond: 500, etaSeconds: 15, updatedAt: '2025-01-10T12:00:05.000Z', error: null, notReplayable: [], ...over,
  });

  it('start sends the range (durations counted back from now), the rate and the filter', async () => {
    api.on('POST', '/v1/destinations/dst_1/replays', { status: 202, body: replay() });
    const r = await cli(['replays', 'start', 'dst_1', '--from', '2h', '--to', '1h', '--rate', '200', '--filter', '{"types":["track"]}']);
    ok(r);
    sent('POST', '/v1/destinations/dst_1/replays', { from: '2025-01-10T10:00:00.000Z', to: '2025-01-10T11:00:00.000Z', rate: 200, filter: { types: ['track'] } });
    assert.match(r.stdout, /^progress: +\[######-+\] +25% running · read 2500\/10000 · matched 2000 · enqueued 2000 · 500\/s · 15s left$/m);
    const bad = await cli(['replays', 'start', 'dst_1', '--from', 'yesterday']);
    assert.equal(bad.code, 2);
  });

  it('status --watch redraws a progress bar on stderr until the replay ends; cancel and list', async () => {
    let polls = 0;
    api.on('GET', '/v1/destinations/dst_1/replays/rpl_1', () => ({ status: 200, body: ++polls < 3 ? replay({ scanned: 2500 * polls, progress: 0.25 * polls }) : replay({ state: 'done', scanned: 10000, progress: 1, etaSeconds: null }) }));
    let stderr = '';
    let stdout = '';
    const code = await run(['replays', 'status', 'dst_1', 'rpl_1', '--watch'], { env: { SWITCHYARD_ADMIN_URL: api.url, SWITCHYARD_ADMIN_TOKEN: TOKEN }, stdout: (s) => { stdout += s; }, stderr: (s) => { stderr += s; }, sleep: async () => undefined });
    assert.equal(code, 0);
    assert.match(stderr, /\r\[######-+\] +25%/);
    assert.match(stderr, /\r\[#{24}\] 100% done/);
    assert.match(stdout, /^state: +done$/m);
    api.on('DELETE', '/v1/destinations/dst_1/replays/rpl_1', { status: 202, body: replay({ cancelRequestedAt: '2025-01-10T12:00:06.000Z' }) });
    const cancelled = await cli(['replays', 'cancel', 'dst_1', 'rpl_1']);
    ok(cancelled);
    assert.equal(cancelled.stdout, 'cancelling replay rpl_1\n');
    api.on('GET', '/v1/destinations/dst_1/replays', { status: 200, body: { replays: [replay()] } });
    assert.match((await cli(['replays', 'list', 'dst_1'])).stdout, /rpl_1\s+running\s+2025-01-10T10:00:00\.000Z\s+2025-01-10T11:00:00\.000Z\s+2500\/10000\s+2000/);
  });
});
