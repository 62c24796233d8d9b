import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { browserEndpoint, browserSettings, defaultPublicUrl } from './browser-settings.js';

describe('browserEndpoint: a public URL as analytics.js wants it (apiHost without scheme, protocol apart)', () => {
  const cases: Array<[url: string, apiHost: string, protocol: 'http' | 'https']> = [
    ['http://127.0.0.1:8080', '127.0.0.1:8080/v1', 'http'],
    ['http://127.0.0.1:8080/', '127.0.0.1:8080/v1', 'http'],
    ['https://track.example.com', 'track.example.com/v1', 'https'],
    ['https://track.example.com:443/', 'track.example.com/v1', 'https'],
    ['https://example.com/ingest/', 'example.com/ingest/v1', 'https'],
    ['http://[::1]:8080', '[::1]:8080/v1', 'http'],
  ];
  for (const [url, apiHost, protocol] of cases) {
    it(`${url} → ${protocol}://${apiHost}`, () => assert.deepEqual(browserEndpoint(url), { apiHost, protocol }));
  }
  for (const bad of ['ftp://example.com', 'https://user:pw@example.com', 'https://example.com/?a=1', 'https://example.com/#x', 'not a url']) {
    it(`refuses ${bad}`, () => assert.throws(() => browserEndpoint(bad)));
  }
});

describe('defaultPublicUrl: the listen address, reachable from a browser on the same machine', () => {
  const cases: Array<[host: string, port: number, url: string]> = [
    ['127.0.0.1', 8080, 'http://127.0.0.1:8080'],
    ['0.0.0.0', 8080, 'http://127.0.0.1:8080'],
    ['::', 9000, 'http://127.0.0.1:9000'],
    ['::1', 8080, 'http://[::1]:8080'],
    ['ingest.internal', 80, 'http://ingest.internal:80'],
  ];
  for (const [host, port, url] of cases) it(`${host}:${port} → ${url}`, () => assert.equal(defaultPublicUrl(host, port), url));
});

describe('browserSettings: analytics.js sends every call here and loads nothing else', () => {
  const doc = browserSettings('wk_abc', { apiHost: '127.0.0.1:8080/v1', protocol: 'http' }) as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- a free-form document

  it('names this ingest, the protocol and the write key in the one integration', () => {
    assert.deepEqual(doc.integrations, { 'Segment.io': { apiKey: 'wk_abc', apiHost: '127.0.0.1:8080/v1', protocol: 'http' } });
  });
  it('no remote plugins, middleware, routing rules or video plugins; remote metrics off', () => {
    assert.deepEqual(doc.remotePlugins, []);
    assert.deepEqual(doc.enabledMiddleware, {});
    assert.equal(doc.middlewareSettings.routingRules, undefined);
    assert.equal(doc.legacyVideoPluginsEnabled, false);
    assert.equal(doc.metrics.sampleRate, 0);
  });
});
