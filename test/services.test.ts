// Each program starts against the real stack, answers its health, readiness and metrics routes,
// and stops on SIGTERM within a few seconds.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { freePort } from '../tools/stack/ports.js';
import { runOnce, spawnService, waitForHttp } from '../tools/stack/services.js';
import { testStack, uniquePrefix } from './support/stack.js';

const services = [
  { name: 'control', portVar: 'CONTROL_PORT' },
  { name: 'ingest', portVar: 'INGEST_PORT' },
  { name: 'fanout', portVar: 'FANOUT_PORT' },
  { name: 'delivery', portVar: 'DELIVERY_PORT' },
  { name: 'audiences', portVar: 'AUDIENCES_PORT' },
];

describe('services start, report health and stop cleanly', () => {
  const { brokers, registryUrl } = testStack();
  const prefix = uniquePrefix('svc');
  const env = { KAFKA_BROKERS: brokers, SCHEMA_REGISTRY_URL: registryUrl, SWITCHYARD_TOPIC_PREFIX: prefix, LOG_LEVEL: 'info', SWITCHYARD_ADMIN_TOKEN: 'services-test-admin-token' };

  it('setup creates the topics and registers the schemas, twice without error', async () => {
    await runOnce('setup', { env });
    await runOnce('setup', { env });
  });

  for (const { name, portVar } of services) {
    it(`${name}: /healthz, /readyz, /metrics, then SIGTERM exits 0 within 5 s`, async () => {
      const port = await freePort();
      const proc = spawnService(name, { env: { ...env, [portVar]: String(port) } });
      try {
        const base = `http://127.0.0.1:${port}`;
        await waitForHttp(`${base}/readyz`, 30_000, proc);
        const health = await fetch(`${base}/healthz`);
        assert.equal(health.status, 200);
        const ready = await (await fetch(`${base}/readyz`)).json() as { ready: boolean; checks: Record<string, boolean> };
        assert.equal(ready.ready, true);
        assert.ok(Object.keys(ready.checks).length > 0);
        const metrics = await fetch(`${base}/metrics`);
        assert.equal(metrics.status, 200);
        assert.match(metrics.headers.get('content-type') ?? '', /text\/plain/);
        assert.match(await metrics.text(), new RegExp(`process_cpu_user_seconds_total\\{service="${name}"\\}`));

        const t0 = Date.now();
        const code = await proc.stop('SIGTERM', 25_000);
        const took = Date.now() - t0;
        assert.equal(code, 0, proc.output.slice(-10).join('\n'));
        assert.ok(took < 20_000, `took ${took} ms to stop (Kubernetes allows 30 s)`);
        const lines = proc.output.map((l) => { try { return JSON.parse(l) as { msg?: string; service?: string }; } catch { return undefined; } });
        assert.ok(lines.every((l) => l === undefined || l.service === name), 'every log line is JSON from this service');
        assert.ok(lines.some((l) => l?.msg === 'stopped'));
      } finally {
        await proc.stop('SIGKILL');
      }
    });
  }

  it('a service with a bad environment exits 2 naming the variable', async () => {
    const proc = spawnService('ingest', { env: { ...env, INGEST_PORT: 'eighty', KAFKA_BROKERS: 'nowhere', INGEST_PUBLIC_URL: 'track.example.com' } });
    assert.equal(await proc.exited, 2);
    const text = proc.output.join('\n');
    assert.match(text, /INGEST_PORT/);
    assert.match(text, /INGEST_PUBLIC_URL/);
    assert.match(text, /KAFKA_BROKERS/);
  });
});
