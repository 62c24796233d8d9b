import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { z } from 'zod';
import { ConfigError } from './errors.js';
import { commonEnv, env, loadConfig, parseDuration, topicEnv } from './config.js';

const schema = z.object({ ...commonEnv, ...topicEnv, INGEST_PORT: env.port(8080), SWITCHYARD_ADMIN_TOKEN: z.string().min(16) });

describe('loadConfig', () => {
  it('applies defaults when variables are unset or empty', () => {
    const config = loadConfig(schema, { SWITCHYARD_ADMIN_TOKEN: 'x'.repeat(16), INGEST_PORT: '' });
    assert.deepEqual(config.KAFKA_BROKERS, ['127.0.0.1:9092']);
    assert.equal(config.INGEST_PORT, 8080);
    assert.equal(config.SWITCHYARD_TOPIC_PREFIX, 'switchyard.');
    assert.deepEqual(config.SWITCHYARD_RETRY_TIERS, [10_000, 60_000, 600_000, 3_600_000]);
  });

  it('names every bad variable at once, and never echoes a secret', () => {
    const err = (() => {
      try {
        loadConfig(schema, { KAFKA_BROKERS: 'no-port', INGEST_PORT: '70000', LOG_LEVEL: 'loud', SWITCHYARD_ADMIN_TOKEN: 'short-secret', SWITCHYARD_RETRY_TIERS: '10s,soon' });
      } catch (e) { return e; }
      return undefined;
    })();
    assert.ok(err instanceof ConfigError);
    const names = err.problems.map((p) => p.split(':')[0]);
    assert.deepEqual(names.sort(), ['INGEST_PORT', 'KAFKA_BROKERS', 'LOG_LEVEL', 'SWITCHYARD_ADMIN_TOKEN', 'SWITCHYARD_RETRY_TIERS']);
    assert.match(err.message, /KAFKA_BROKERS: expected host:port/);
    assert.doesNotMatch(err.message, /short-secret/);
    assert.match(err.message, /SWITCHYARD_ADMIN_TOKEN: .*\(set\)/);
  });

  it('reports a missing required variable as unset', () => {
    assert.throws(() => loadConfig(schema, {}), (e: unknown) => e instanceof ConfigError && /SWITCHYARD_ADMIN_TOKEN: .*\(unset\)/.test(e.message));
  });

  it('parses broker lists and registry URLs', () => {
    const config = loadConfig(schema, { KAFKA_BROKERS: 'a:9092, b:9093', SCHEMA_REGISTRY_URL: 'https://reg.example:8081/apis/ccompat/v7', SWITCHYARD_ADMIN_TOKEN: 'y'.repeat(20) });
    assert.deepEqual(config.KAFKA_BROKERS, ['a:9092', 'b:9093']);
    assert.equal(config.SCHEMA_REGISTRY_URL, 'https://reg.example:8081/apis/ccompat/v7');
    assert.throws(() => loadConfig(schema, { SCHEMA_REGISTRY_URL: 'ftp://x', SWITCHYARD_ADMIN_TOKEN: 'y'.repeat(20) }), /SCHEMA_REGISTRY_URL/);
  });
});

describe('env.labelBound', () => {
  const bounds = z.object({ SWITCHYARD_METRICS_DESTINATIONS: env.labelBound() });
  it('defaults to top:100, takes none, all and top:N, and names the variable of anything else', () => {
    assert.deepEqual(loadConfig(bounds, {}).SWITCHYARD_METRICS_DESTINATIONS, { mode: 'top', n: 100 });
    assert.deepEqual(loadConfig(bounds, { SWITCHYARD_METRICS_DESTINATIONS: 'top:20' }).SWITCHYARD_METRICS_DESTINATIONS, { mode: 'top', n: 20 });
    assert.deepEqual(loadConfig(bounds, { SWITCHYARD_METRICS_DESTINATIONS: 'none' }).SWITCHYARD_METRICS_DESTINATIONS, { mode: 'none' });
    assert.throws(() => loadConfig(bounds, { SWITCHYARD_METRICS_DESTINATIONS: 'top:0' }), /SWITCHYARD_METRICS_DESTINATIONS: expected none, all or top:N \(N from 1 to 10000\) \("top:0"\)/);
  });
});

describe('parseDuration', () => {
  const cases: Array<[string, number | undefined]> = [['500ms', 500], ['10s', 10_000], ['1m', 60_000], ['4h', 14_400_000], ['1.5s', 1500], ['1d', 86_400_000], ['10', undefined], ['-1s', undefined], ['soon', undefined]];
  for (const [text, ms] of cases) it(`${text} → ${ms}`, () => assert.equal(parseDuration(text), ms));
});
