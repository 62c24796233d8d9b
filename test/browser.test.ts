// The official analytics.js (@segment/analytics-next from node_modules, unmodified) in headless
// Chromium against the real pipeline: a local web site loads it, it fetches its settings from
// ingest, and every call it sends reaches a real webhook receiver through ingest → fan-out →
// delivery with the browser's context — including calls made as the page is left. Both ways a
// site loads it: the npm form (AnalyticsBrowser.load, here its UMD bundle) and the classic
// snippet with the standalone bundle. Nothing may load from outside 127.0.0.1: other host names do
// not resolve, and any request elsewhere fails the suite.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { join, normalize, sep } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { repoRoot } from '../tools/stack/paths.js';
import { makeDestination, makeSource, writeConfig } from './support/config.js';
import { startReceiver, type Receiver } from './support/receiver.js';
import { pipelineEnv, setupTopics, startService, type RunningService } from './support/services.js';
import { uniquePrefix } from './support/stack.js';

const CHROMIUM = '/usr/bin/chromium';
/** The webpack bundles analytics-next ships: index.js (UMD, global AnalyticsNext), standalone.js (what the snippet loads) and their chunks. */
const BUNDLES = join(repoRoot, 'node_modules', '@segment', 'analytics-next', 'dist', 'umd');
const LOCALE = 'de-CH';
const TIMEZONE = 'Europe/Zurich';

type Body = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- webhook bodies of several shapes

interface Site { url: string; pages: Record<string, string>; served: string[]; close(): Promise<void> }

/**
 * The test's web site on 127.0.0.1, which also plays the site's own CDN for the snippet: its
 * pages; analytics-next's whole bundle folder under /analytics-next/bundles/ (where the standalone
 * bundle loads its chunks from: `<analytics._cdn>/analytics-next/bundles/`); and the settings of
 * `<analytics._cdn>/v1/projects/<key>/settings` passed through from ingest, as a CDN or reverse
 * proxy in front of ingest would.
 */
async function startSite(ingestUrl: string): Promise<Site> {
  const pages: Record<string, string> = {};
  const served: string[] = [];
  const server: Server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://site').pathname;
    served.push(path);
    const page = pages[path];
    if (path === '/favicon.ico') return void res.writeHead(204).end();
    if (/^\/v1\/projects\/[^/]+\/settings$/.test(path)) {
      return void fetch(`${ingestUrl}${path}`).then(async (answer) => {
        res.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'application/json', 'cache-control': answer.headers.get('cache-control') ?? 'no-store' }).end(await answer.text());
      }, () => res.writeHead(502).end());
    }
    if (page !== undefined) {
      // The next page takes a moment to arrive, as over any network: the page being left keeps
      // running meanwhile, as it would (on loopback with a busy machine the race could otherwise go
      // either way and the test would prove nothing stable).
      const send = () => res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' }).end(page);
      return void (path === '/away.html' ? setTimeout(send, 150) : send());
    }
    if (path.startsWith('/analytics-next/bundles/')) {
      const file = normalize(join(BUNDLES, decodeURIComponent(path.slice('/analytics-next/bundles/'.length))));
      if (file.startsWith(BUNDLES + sep) && existsSync(file)) return void res.writeHead(200, { 'content-type': 'text/javascript; charset=utf-8' }).end(readFileSync(file));
    }
    res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return { url: `http://127.0.0.1:${port}`, pages, served, close: () => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }) };
}

/**
 * A page using the classic snippet, written the way the official one works: `window.analytics`
 * is a queue of [method, ...args] until the standalone bundle replaces it; `analytics._cdn` is
 * where the bundle fetches its settings and chunks from, and the script tag where the site hosts
 * the bundle (both instead of Segment's CDN).
 */
function snippetPage(title: string, writeKey: string, cdn: string, bundle: string, loadOptions: unknown, calls: string, body: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${title}</title>
<script>
!function () {
  var analytics = window.analytics = window.analytics || [];
  if (analytics.initialize || analytics.invoked) return;
  analytics.invoked = true;
  analytics.methods = ['trackSubmit', 'trackClick', 'trackLink', 'trackForm', 'pageview', 'identify', 'reset', 'group', 'track', 'ready', 'alias', 'debug', 'page', 'screen', 'once', 'off', 'on', 'addSourceMiddleware', 'addIntegrationMiddleware', 'setAnonymousId', 'addDestinationMiddleware', 'register'];
  analytics.factory = function (method) {
    return function () {
      var args = Array.prototype.slice.call(arguments);
      args.unshift(method);
      analytics.push(args);
      return analytics;
    };
  };
  for (var i = 0; i < analytics.methods.length; i++) analytics[analytics.methods[i]] = analytics.factory(analytics.methods[i]);
  analytics.load = function (key, options) {
    var script = document.createElement('script');
    script.async = true;
    script.src = ${JSON.stringify(bundle)};
    document.head.appendChild(script);
    analytics._loadOptions = options;
  };
  analytics._writeKey = ${JSON.stringify(writeKey)};
  analytics._cdn = ${JSON.stringify(cdn)};
  analytics.load(${JSON.stringify(writeKey)}, ${JSON.stringify(loadOptions)});
  ${calls}
}();
</script></head><body><h1>${title}</h1>${body}</body></html>`;
}

describe('analytics.js (analytics-next) in headless Chromium against the real pipeline', { skip: existsSync(CHROMIUM) ? false : `${CHROMIUM} is not installed (apt install chromium)` }, () => {
  const prefix = uniquePrefix('browser');
  const token = `browser-admin-${randomUUID()}`;
  const source = makeSource({ name: 'Website' });
  const writeKey = source.writeKeys[0]!;
  const services: RunningService[] = [];
  let control: RunningService;
  let ingest: RunningService;
  let receiver: Receiver;
  let site: Site;
  let browser: Browser;
  let debuggerPage: Page;
  let userAgent: string;
  /** Requests the pages made anywhere but 127.0.0.1 (none can resolve), and script errors. */
  const outside: string[] = [];
  const problems: string[] = [];
  /** Every request the analytics pages made to ingest, as "METHOD /path". */
  const toIngest: string[] = [];

  const bodies = () => receiver.requests.map((r) => JSON.parse(r.text) as Body);
  const waitForBodies = async (match: (b: Body) => boolean, count: number, timeoutMs = 20_000): Promise<Body[]> => {
    await receiver.waitFor(() => bodies().filter(match).length >= count, timeoutMs);
    return bodies().filter(match);
  };
  /** Tracking requests ingest answered, by route (from its metrics): `{ batch: 1, track: 3, settings: 2, … }`. */
  const ingestRequests = async (): Promise<Record<string, number>> => {
    const text = await (await fetch(`${ingest.url}/metrics`)).text();
    const counts: Record<string, number> = {};
    for (const [, route, value] of text.matchAll(/^ingest_http_requests_total\{route="([^"]+)",status="200"[^}]*\} (\S+)$/gm)) counts[route!] = Number(value);
    return counts;
  };

  /**
   * A fresh browser profile (no cookies, no localStorage). Requests are watched, never
   * intercepted: an intercepted request of a page being left never completes, which would hide
   * exactly what the unload tests look at. Host names other than 127.0.0.1 do not resolve (launch
   * flags), and any request to them is recorded and fails the suite.
   */
  const newContext = async (): Promise<BrowserContext> => {
    const context = await browser.newContext({ locale: LOCALE, timezoneId: TIMEZONE });
    context.on('request', (r) => {
      const url = new URL(r.url());
      if (url.hostname !== '127.0.0.1') outside.push(r.url());
      else if (r.url().startsWith(ingest.url)) toIngest.push(`${r.method()} ${url.pathname}`);
    });
    context.on('page', (page) => {
      page.on('pageerror', (err) => problems.push(`pageerror: ${err.message}`));
      page.on('console', (m) => { if (m.type() === 'error') problems.push(`console: ${m.text()}`); });
    });
    return context;
  };

  /** The browser context every call should carry, as analytics.js sent it. */
  const assertBrowserContext = (body: Body, pagePath: string, title: string) => {
    const where = `${body.type} ${body.messageId}`;
    assert.match(body.messageId, /^ajs-next-/, where);
    assert.equal(body.context.userAgent, userAgent, where);
    assert.equal(body.context.locale, LOCALE, where);
    assert.equal(body.context.timezone, TIMEZONE, where);
    assert.equal(body.context.library.name, 'analytics.js', where);
    assert.match(body.context.library.version, /^(npm:)?next-\d+\.\d+\.\d+$/, where);
    assert.deepEqual(body.context.page, { path: pagePath, referrer: '', search: '', title, url: `${site.url}${pagePath}` }, where);
    assert.equal(body.context.ip, '127.0.0.1', where);
  };

  before(async () => {
    receiver = await startReceiver();
    const destination = makeDestination(source.id, { webhooks: [{ url: receiver.url, headers: {}, clientCertificate: null }] });
    const env = pipelineEnv(prefix, { SWITCHYARD_ADMIN_TOKEN: token, SWITCHYARD_ALLOWED_CIDRS: '127.0.0.0/8', LOG_LEVEL: 'warn' });
    await setupTopics(env);
    await writeConfig(prefix, { sources: [source], destinations: [destination] });
    // Ingest without INGEST_PUBLIC_URL: its settings name the address it listens on.
    const started = await Promise.all(['control', 'ingest', 'fanout', 'delivery'].map((name) => startService(name, env)));
    services.push(...started);
    [control, ingest] = started as [RunningService, RunningService];
    site = await startSite(ingest.url);
    site.pages['/away.html'] = '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Elsewhere</title></head><body>No analytics here.</body></html>';
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1'] });
  });

  after(async () => {
    await browser?.close();
    await site?.close();
    await Promise.all(services.map((s) => s.stop()));
    await receiver?.close();
  });

  it('the debugger is live on the source before the browser sends anything', { timeout: 30_000 }, async () => {
    debuggerPage = await (await newContext()).newPage();
    userAgent = await debuggerPage.evaluate('navigator.userAgent') as string;
    await debuggerPage.goto(`${control.url}/debugger`);
    await debuggerPage.getByLabel('Admin token').fill(token);
    await debuggerPage.getByRole('button', { name: 'Sign in' }).click();
    await debuggerPage.getByLabel('Source', { exact: true }).selectOption(source.id);
    await debuggerPage.locator('#status[data-state="live"]').waitFor({ timeout: 15_000 });
  });

  it('AnalyticsBrowser.load({ writeKey, cdnURL }): page, identify, track, group and alias reach the webhook with their fields and the browser context', { timeout: 60_000 }, async () => {
    const title = 'Pricing';
    site.pages['/npm.html'] = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${title}</title>
<script src="/analytics-next/bundles/index.js"></script>
<script>
  // As an npm user writes it. keepalive: a call made just before the page is left still leaves (see the next test).
  window.ajs = AnalyticsNext.AnalyticsBrowser.load(
    { writeKey: ${JSON.stringify(writeKey)}, cdnURL: ${JSON.stringify(ingest.url)} },
    { integrations: { 'Segment.io': { deliveryStrategy: { strategy: 'standard', config: { keepalive: true } } } } });
</script></head><body><h1>${title}</h1></body></html>`;
    const page = await (await newContext()).newPage();
    await page.goto(`${site.url}/npm.html`);
    // Each call resolves once analytics.js has sent it; its context names the message.
    const sent = await page.evaluate(`(async () => {
      const ids = {};
      const page = await ajs.page('Docs', 'Pricing', { plan: 'pro' });
      ids.page = page.event.messageId;
      ids.anonymousId = page.event.anonymousId;
      // The anonymous visitor signs up: alias (previousId: the anonymous id), then identify.
      ids.alias = (await ajs.alias('ada-npm')).event.messageId;
      ids.identify = (await ajs.identify('ada-npm', { email: 'ada@example.com', name: 'Ada' })).event.messageId;
      ids.track = (await ajs.track('Plan Chosen', { plan: 'pro', price: 29 })).event.messageId;
      ids.group = (await ajs.group('org-npm', { name: 'Acme', employees: 12 })).event.messageId;
      return ids;
    })()`) as Record<string, string>;
    const got = await waitForBodies((b) => Object.values(sent).includes(b.messageId), 5);
    const byType = Object.fromEntries(got.map((b) => [b.type, b])) as Record<string, Body>;
    assert.deepEqual(Object.keys(byType).sort(), ['alias', 'group', 'identify', 'page', 'track']);
    for (const b of got) assertBrowserContext(b, '/npm.html', title);

    assert.equal(byType.page!.userId, null);
    assert.equal(byType.page!.anonymousId, sent.anonymousId);
    assert.equal(byType.page!.name, 'Pricing');
    assert.equal(byType.page!.category, 'Docs');
    assert.equal(byType.page!.properties.plan, 'pro');
    assert.equal(byType.page!.properties.url, `${site.url}/npm.html`);
    assert.equal(byType.identify!.userId, 'ada-npm');
    assert.deepEqual(byType.identify!.traits, { email: 'ada@example.com', name: 'Ada' });
    assert.equal(byType.track!.userId, 'ada-npm');
    assert.equal(byType.track!.event, 'Plan Chosen');
    assert.deepEqual(byType.track!.properties, { plan: 'pro', price: 29 });
    assert.equal(byType.group!.groupId, 'org-npm');
    assert.deepEqual(byType.group!.traits, { name: 'Acme', employees: 12 });
    assert.equal(byType.alias!['User ID'], 'ada-npm');
    assert.equal(byType.alias!['Previous ID'], sent.anonymousId);
    assert.equal(byType.track!.anonymousId, sent.anonymousId, 'the visitor keeps its anonymous id');
    // One request per call, on the short browser paths, after the settings.
    for (const path of ['/v1/p', '/v1/a', '/v1/i', '/v1/t', '/v1/g']) assert.ok(toIngest.includes(`POST ${path}`), `${path} in ${toIngest.join(', ')}`);
    assert.equal(toIngest[0], `GET /v1/projects/${writeKey}/settings`);
    await page.context().close();
  });

  it('a track called right before the page is left (keepalive fetch during unload) reaches the webhook, and so does a sendBeacon from pagehide', { timeout: 60_000 }, async () => {
    const title = 'Checkout';
    // The page also beacons a call of its own as it goes, as hand-written tracking and older
    // libraries do: text/plain;charset=UTF-8, the write key in the body, no preflight possible.
    const beacon = `addEventListener('pagehide', () => navigator.sendBeacon(${JSON.stringify(`${ingest.url}/v1/t`)}, JSON.stringify({ writeKey: ${JSON.stringify(writeKey)}, userId: 'grace-npm', event: 'Beacon On Leave', context: { page: { path: location.pathname } } })));`;
    site.pages['/npm-leave.html'] = site.pages['/npm.html']!.replace('<title>Pricing</title>', `<title>${title}</title>`).replace('<h1>Pricing</h1>', `<h1>${title}</h1>`).replace('</script></head>', `${beacon}\n</script></head>`);
    const page = await (await newContext()).newPage();
    await page.goto(`${site.url}/npm-leave.html`);
    await page.evaluate(`ajs.identify('grace-npm').then(() => true)`);
    await waitForBodies((b) => b.type === 'identify' && b.userId === 'grace-npm', 1);
    // The call and the navigation in the same task: the page is being left while the call is sent.
    await page.evaluate(`ajs.track('Checkout Left', { step: 2 }); location.href = '/away.html';`);
    await page.waitForURL(`${site.url}/away.html`);
    const [left] = await waitForBodies((b) => b.event === 'Checkout Left', 1);
    assert.equal(left!.userId, 'grace-npm');
    assert.deepEqual(left!.properties, { step: 2 });
    assertBrowserContext(left!, '/npm-leave.html', title);
    const [beaconed] = await waitForBodies((b) => b.event === 'Beacon On Leave', 1);
    assert.equal(beaconed!.userId, 'grace-npm');
    assert.deepEqual(beaconed!.context, { page: { path: '/npm-leave.html' }, ip: '127.0.0.1' });
    await page.context().close();
  });

  it('the classic snippet with the standalone bundle (the site as its CDN, chunks from there), batching: every call, and two made as the page is left, arrive in one keepalive /v1/b request sent on unload', { timeout: 60_000 }, async () => {
    const title = 'Snippet shop';
    // Batching with a minute's timeout and room for 100 calls: nothing leaves until the page does.
    const options = { integrations: { 'Segment.io': { deliveryStrategy: { strategy: 'batching', config: { size: 100, timeout: 60_000 } } } } };
    site.pages['/snippet.html'] = snippetPage(title, writeKey, site.url, `${site.url}/analytics-next/bundles/standalone.js`, options, `
  analytics.page('Shop', 'Home', { section: 'snippet' });
  analytics.alias('lin-snippet', 'lead-4711');
  analytics.identify('lin-snippet', { email: 'lin@example.com' });
  analytics.track('Cart Viewed', { items: 3 });
  analytics.group('org-snippet', { name: 'Initech' });`, '<p><a id="help" href="/away.html">Help</a></p>');
    const answeredBefore = await ingestRequests();
    const requestsBefore = toIngest.length;
    const page = await (await newContext()).newPage();
    await page.goto(`${site.url}/snippet.html`);
    // The standalone bundle replaces the snippet's queue with the real instance once loaded.
    await page.waitForFunction('window.analytics.initialized === true', undefined, { timeout: 15_000 });
    // trackLink lives in a chunk the bundle loads on demand, from <analytics._cdn>/analytics-next/bundles/.
    await page.evaluate(`analytics.trackLink(document.getElementById('help'), 'Help Clicked', { placement: 'footer' }).then(() => true)`);
    assert.ok(site.served.some((p) => /^\/analytics-next\/bundles\/auto-track\.bundle\.[0-9a-f]+\.js$/.test(p)), `auto-track chunk from the site: ${site.served.join(', ')}`);
    await page.waitForTimeout(300);
    assert.equal(receiver.requests.filter((r) => r.text.includes('snippet')).length, 0, 'nothing sent while the page stays');
    // A call, then a click on a tracked link (its own call, then the navigation): both as the page is left.
    await page.evaluate(`analytics.track('Checkout Abandoned', { items: 3 }); document.getElementById('help').click();`);
    await page.waitForURL(`${site.url}/away.html`);

    const got = await waitForBodies((b) => JSON.stringify(b).includes('snippet') || ['Checkout Abandoned', 'Help Clicked'].includes(b.event), 7);
    const byType = Object.fromEntries(got.filter((b) => b.type !== 'track' || b.event === 'Cart Viewed').map((b) => [b.type, b])) as Record<string, Body>;
    assert.deepEqual(Object.keys(byType).sort(), ['alias', 'group', 'identify', 'page', 'track']);
    for (const b of got) assertBrowserContext(b, '/snippet.html', title);
    assert.equal(byType.page!.name, 'Home');
    assert.equal(byType.page!.properties.section, 'snippet');
    assert.deepEqual(byType.identify!.traits, { email: 'lin@example.com' });
    assert.deepEqual(byType.track!.properties, { items: 3 });
    assert.equal(byType.group!.groupId, 'org-snippet');
    assert.equal(byType.alias!['User ID'], 'lin-snippet');
    assert.equal(byType.alias!['Previous ID'], 'lead-4711');
    const abandoned = got.find((b) => b.event === 'Checkout Abandoned')!;
    assert.equal(abandoned.userId, 'lin-snippet');
    assert.deepEqual(abandoned.properties, { items: 3 });
    const clicked = got.find((b) => b.event === 'Help Clicked')!;
    assert.equal(clicked.userId, 'lin-snippet');
    assert.deepEqual(clicked.properties, { placement: 'footer' });
    // While the page stayed it sent nothing to ingest (its settings came through the site; the
    // request sent during unload is not reported to the test once the page is gone); ingest then
    // answered the settings and one batch, nothing else.
    assert.deepEqual(toIngest.slice(requestsBefore).filter((r) => r !== 'POST /v1/b'), []);
    const answered = await ingestRequests();
    const grew = Object.keys(answered).filter((route) => answered[route] !== (answeredBefore[route] ?? 0));
    assert.deepEqual(grew.sort(), ['batch', 'settings']);
    assert.equal(answered.batch! - (answeredBefore.batch ?? 0), 1);
    await page.context().close();
  });

  it('the debugger shows a browser call with the context it was sent with', { timeout: 30_000 }, async () => {
    const [track] = bodies().filter((b) => b.event === 'Plan Chosen');
    const row = debuggerPage.locator(`#feed button[data-message-id="${track!.messageId}"]`);
    await row.waitFor({ timeout: 10_000 });
    await row.click();
    await debuggerPage.locator('#detail-title', { hasText: track!.messageId }).waitFor();
    const shown = JSON.parse(await debuggerPage.locator('#json').textContent() ?? '{}') as Body;
    assert.equal(shown.event, 'Plan Chosen');
    assert.equal(shown.context.userAgent, userAgent);
    assert.equal(shown.context.locale, LOCALE);
    assert.deepEqual(shown.context.page, track!.context.page);
    assert.deepEqual(shown.context.library, track!.context.library);
  });

  it('nothing was loaded from outside 127.0.0.1, no bundle chunk was missing, and no page reported an error', () => {
    assert.deepEqual(outside, []);
    assert.deepEqual(problems, []);
    const bundles = site.served.filter((p) => p.startsWith('/analytics-next/'));
    assert.ok(bundles.includes('/analytics-next/bundles/index.js') && bundles.includes('/analytics-next/bundles/standalone.js'), bundles.join(', '));
  });
});
