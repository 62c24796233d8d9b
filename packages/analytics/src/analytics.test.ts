import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { Analytics, createClient, type SentBatch } from './analytics.js';
import { AnalyticsError, type AnalyticsErrorCode } from './errors.js';
import type { Message } from './messages.js';
import type { AnalyticsOptions } from './options.js';
import { FakeClock } from './test-support/fake-clock.js';
import { bodyOf, startRecordingServer, type RecordingServer } from './test-support/recording-server.js';
import { LIBRARY_NAME, LIBRARY_VERSION } from './version.js';

const WRITE_KEY = 'wk_test_123';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const settle = (ms = 50) => new Promise((resolve) => setTimeout(resolve, ms));

let server: RecordingServer;
let clients: Analytics[];

beforeEach(async () => {
  server = await startRecordingServer();
  clients = [];
});
afterEach(async () => {
  await Promise.all(clients.map((c) => c.close()));
  await server.close();
});

/** A client of the recording server; env is empty so the outer DEBUG cannot turn logging on. */
function client(options: AnalyticsOptions = {}): Analytics {
  const c = new Analytics(WRITE_KEY, { endpoint: server.url, env: {}, ...options });
  clients.push(c);
  return c;
}

/** A callback and a promise of what it receives. */
function outcome(): { callback: (err?: Error) => void; result: Promise<Error | undefined> } {
  let callback!: (err?: Error) => void;
  const result = new Promise<Error | undefined>((resolve) => (callback = resolve));
  return { callback, result };
}

function thrownCode(fn: () => void): AnalyticsErrorCode | undefined {
  try {
    fn();
    return undefined;
  } catch (err) {
    assert.ok(err instanceof AnalyticsError);
    return err.code;
  }
}

const ids = (batch: Message[]) => batch.map((m) => m.messageId);

describe('Analytics: when it flushes', () => {
  it('sends nothing until 20 calls are queued, then the 20 in one request (default flushAt)', async () => {
    const c = client({ clock: new FakeClock() });
    for (let i = 0; i < 19; i++) c.track({ userId: 'u', event: 'E', messageId: `m${i}` });
    await settle();
    assert.equal(server.requests.length, 0);
    c.track({ userId: 'u', event: 'E', messageId: 'm19' });
    await server.waitForRequests(1);
    const req = server.requests[0]!;
    assert.equal(req.method, 'POST');
    assert.equal(req.path, '/v1/batch');
    assert.deepEqual(ids(bodyOf(req).batch), Array.from({ length: 20 }, (_, i) => `m${i}`));
  });

  it('sends what is queued once 5 s have passed since the last flush (default flushAfter, fake clock)', async () => {
    const clock = new FakeClock();
    const c = client({ clock });
    clock.advance(1000);
    c.track({ userId: 'u', event: 'A' });
    c.identify({ userId: 'u', traits: { plan: 'pro' } });
    assert.deepEqual(clock.pendingDelays, [4000], 'due 5 s after the client started (the last flush)');
    clock.advance(3999);
    await settle();
    assert.equal(server.requests.length, 0);
    clock.advance(1);
    await server.waitForRequests(1);
    const { batch } = bodyOf(server.requests[0]!);
    assert.deepEqual(batch.map((m) => m.type), ['track', 'identify']);
    assert.deepEqual(batch.map((m) => m.timestamp), ['2025-01-01T00:00:01.000Z', '2025-01-01T00:00:01.000Z']);
    await c.flush();

    // The next window counts from that flush.
    clock.advance(2000);
    c.page({ userId: 'u', name: 'Home' });
    assert.deepEqual(clock.pendingDelays, [3000]);
    clock.advance(3000);
    await server.waitForRequests(2);
  });

  it('sends every call on its own with flushAt: 1, and accepts size as its alias', async () => {
    for (const options of [{ flushAt: 1 }, { size: 1 }]) {
      const before = server.requests.length;
      const c = client({ ...options, clock: new FakeClock() });
      c.track({ userId: 'u', event: 'one' });
      c.track({ userId: 'u', event: 'two' });
      c.track({ userId: 'u', event: 'three' });
      await c.flush();
      const sent = server.requests.slice(before).map((r) => bodyOf(r).batch);
      assert.deepEqual(sent.map((b) => b.map((m) => m.event)), [['one'], ['two'], ['three']], JSON.stringify(options));
    }
  });

  it('refuses conflicting flushAt and size, and bad option values, with INVALID_OPTION', () => {
    const bad: AnalyticsOptions[] = [{ flushAt: 5, size: 6 }, { flushAt: 0 }, { flushAt: 1.5 }, { flushAfter: -1 }, { maxRetries: -1 }, { maxQueueSize: 0 }, { maxConcurrentRequests: 0 }, { timeoutMs: 0 }, { endpoint: 'ftp://x' }, { endpoint: 'not a url' }];
    for (const options of bad) assert.equal(thrownCode(() => new Analytics(WRITE_KEY, options)), 'INVALID_OPTION', JSON.stringify(options));
    assert.equal(thrownCode(() => new Analytics('')), 'MISSING_WRITE_KEY');
  });

  it('makes no HTTP request inside a call: the request starts after the call returned', async () => {
    let fetches = 0;
    const counting: typeof fetch = (input, init) => {
      fetches++;
      return fetch(input, init);
    };
    const c = client({ flushAt: 1, fetch: counting });
    c.track({ userId: 'u', event: 'E' });
    assert.equal(fetches, 0);
    await c.flush();
    assert.equal(fetches, 1);
  });
});

describe('Analytics: limits', () => {
  it('never sends a request body over 500 KB, keeping the order of the flush and sending its batches one at a time', async () => {
    server.respond(() => ({ status: 200, body: { success: true }, delayMs: 10 }));
    const c = client({ flushAt: 100, clock: new FakeClock() });
    const pad = 'x'.repeat(30_000);
    for (let i = 0; i < 100; i++) c.track({ userId: 'u', event: 'Big', properties: { i, pad } });
    await c.flush();
    assert.ok(server.requests.length >= 6, `${server.requests.length} requests`);
    for (const r of server.requests) assert.ok(r.bytes <= 500 * 1024, `a body of ${r.bytes} bytes`);
    const order = server.requests.flatMap((r) => bodyOf(r).batch.map((m) => m.properties?.i));
    assert.deepEqual(order, Array.from({ length: 100 }, (_, i) => i));
    assert.equal(server.maxConcurrent, 1);
  });

  it('keeps at most maxConcurrentRequests requests in flight, sending every flush in the end', async () => {
    server.respond(() => ({ status: 200, body: { success: true }, delayMs: 30 }));
    const c = client({ flushAt: 1, maxConcurrentRequests: 2 });
    for (let i = 0; i < 6; i++) c.track({ userId: 'u', event: 'E' });
    await c.flush();
    assert.equal(server.messageCount, 6);
    assert.equal(server.maxConcurrent, 2);
  });

  it('refuses a message over 32 KB with MESSAGE_TOO_LARGE and queues nothing', async () => {
    const c = client({ flushAt: 1 });
    assert.throws(() => c.track({ userId: 'u', event: 'E', properties: { pad: 'x'.repeat(33 * 1024) } }), (e: unknown) => e instanceof AnalyticsError && e.code === 'MESSAGE_TOO_LARGE' && !e.retriable);
    assert.equal(c.pending, 0);
    await c.flush();
    assert.equal(server.requests.length, 0);
  });

  it('refuses calls beyond maxQueueSize with QUEUE_FULL, counting messages in flight, and accepts again once they settle', async () => {
    server.respond(() => ({ status: 200, body: { success: true }, delayMs: 50 }));
    const c = client({ maxQueueSize: 3, flushAt: 3 });
    for (let i = 0; i < 3; i++) c.track({ userId: 'u', event: 'E' });
    assert.equal(c.pending, 3);
    assert.throws(() => c.track({ userId: 'u', event: 'E' }), (e: unknown) => e instanceof AnalyticsError && e.code === 'QUEUE_FULL' && e.retriable);
    await c.flush();
    assert.equal(c.pending, 0);
    c.track({ userId: 'u', event: 'E' });
    await c.flush();
    assert.equal(server.messageCount, 4);
  });
});

describe('Analytics: required fields', () => {
  const cases: [string, (c: Analytics) => void, AnalyticsErrorCode][] = [
    ['identify without userId or anonymousId', (c) => c.identify({ traits: {} } as never), 'MISSING_USER_ID'],
    ['track without userId or anonymousId', (c) => c.track({ event: 'E' } as never), 'MISSING_USER_ID'],
    ['track without event', (c) => c.track({ userId: 'u' } as never), 'MISSING_EVENT'],
    ['page without userId or anonymousId', (c) => c.page({ name: 'Home' } as never), 'MISSING_USER_ID'],
    ['screen without userId or anonymousId', (c) => c.screen({ name: 'Home' } as never), 'MISSING_USER_ID'],
    ['group without userId or anonymousId', (c) => c.group({ groupId: 'g' } as never), 'MISSING_USER_ID'],
    ['group without groupId', (c) => c.group({ userId: 'u' } as never), 'MISSING_GROUP_ID'],
    ['alias without userId', (c) => c.alias({ previousId: 'p' } as never), 'MISSING_USER_ID'],
    ['alias without previousId', (c) => c.alias({ userId: 'u' } as never), 'MISSING_PREVIOUS_ID'],
    ['a message that is not an object', (c) => c.track(null as never), 'INVALID_MESSAGE'],
    ['a bad timestamp', (c) => c.track({ userId: 'u', event: 'E', timestamp: 'soon' }), 'INVALID_TIMESTAMP'],
  ];
  for (const [name, call, code] of cases) {
    it(`${name} throws ${code} and queues nothing`, () => {
      const c = client();
      assert.equal(thrownCode(() => call(c)), code);
      assert.equal(c.pending, 0);
    });
  }

  it('accepts each type with its required fields', async () => {
    const c = client({ flushAt: 6 });
    c.identify({ userId: 'u' });
    c.track({ anonymousId: 'a', event: 'E' });
    c.page({ userId: 'u' });
    c.screen({ anonymousId: 'a' });
    c.group({ userId: 'u', groupId: 'g' });
    c.alias({ userId: 'u', previousId: 'p' });
    await c.flush();
    assert.deepEqual(bodyOf(server.requests[0]!).batch.map((m) => m.type), ['identify', 'track', 'page', 'screen', 'group', 'alias']);
  });
});

describe('Analytics: the request', () => {
  it('authenticates with HTTP Basic (write key as user name, empty password) and sends the documented body', async () => {
    const clock = new FakeClock(Date.parse('2025-06-07T08:09:10.111Z'));
    const c = client({ clock, flushAt: 2 });
    c.track({ userId: 'u', event: 'Order Completed', properties: { total: 10 }, context: { ip: '10.0.0.1' }, integrations: { All: false, Webhooks: true } });
    c.identify({ userId: 'u', messageId: 'mine', timestamp: new Date('2020-01-01T00:00:00Z'), traits: { name: 'Ann' } });
    await c.flush();
    const req = server.requests[0]!;
    assert.equal(req.headers.authorization, `Basic ${Buffer.from(`${WRITE_KEY}:`).toString('base64')}`);
    assert.equal(req.headers['content-type'], 'application/json');
    assert.match(req.headers['user-agent'] ?? '', /^@switchyard\/analytics\/0\.1\.0 /);
    const body = bodyOf(req);
    assert.deepEqual(Object.keys(body), ['batch', 'sentAt', 'context']);
    assert.equal(body.sentAt, '2025-06-07T08:09:10.111Z');
    assert.deepEqual(body.context, { library: { name: LIBRARY_NAME, version: LIBRARY_VERSION } });
    const [track, identify] = body.batch;
    assert.match(track!.messageId, UUID);
    assert.deepEqual({ ...track, messageId: 'x' }, {
      type: 'track', messageId: 'x', timestamp: '2025-06-07T08:09:10.111Z', userId: 'u', event: 'Order Completed', properties: { total: 10 }, context: { ip: '10.0.0.1' }, integrations: { All: false, Webhooks: true },
    });
    assert.deepEqual(identify, { type: 'identify', messageId: 'mine', timestamp: '2020-01-01T00:00:00.000Z', userId: 'u', traits: { name: 'Ann' } });
  });

  it('keeps a path prefix of the endpoint', async () => {
    const c = client({ endpoint: `${server.url}/ingest/`, flushAt: 1 });
    c.track({ userId: 'u', event: 'E' });
    await c.flush();
    assert.equal(server.requests[0]?.path, '/ingest/v1/batch');
  });

  it('works through createClient with the same options', async () => {
    const c = createClient(WRITE_KEY, { endpoint: server.url, flushAt: 1, env: {} });
    clients.push(c);
    c.alias({ userId: 'new', previousId: 'old' });
    await c.flush();
    assert.equal(bodyOf(server.requests[0]!).batch[0]?.previousId, 'old');
  });
});

describe('Analytics: retries', () => {
  it('retries a 503 and reports success once the server accepts', async () => {
    server.respond((_req, i) => (i === 0 ? { status: 503, body: { code: 'UNAVAILABLE', message: 'retry later' } } : undefined));
    const c = client({ flushAt: 1 });
    const sent: SentBatch[] = [];
    c.on('sent', (b) => sent.push(b));
    const { callback, result } = outcome();
    c.track({ userId: 'u', event: 'E' }, callback);
    assert.equal(await result, undefined);
    await c.flush();
    assert.equal(server.requests.length, 2);
    assert.deepEqual(ids(bodyOf(server.requests[1]!).batch), ids(bodyOf(server.requests[0]!).batch));
    assert.equal(sent[0]?.attempts, 2);
  });

  it('does not retry a 400 and reports HTTP_ERROR with the status', async () => {
    server.respond(() => ({ status: 400, body: { code: 'INVALID_BATCH', message: 'no' } }));
    const c = client({ flushAt: 1 });
    const errors: [AnalyticsError, Message[]][] = [];
    c.on('error', (err, messages) => errors.push([err, messages]));
    const { callback, result } = outcome();
    c.track({ userId: 'u', event: 'E', messageId: 'm1' }, callback);
    const err = await result;
    assert.ok(err instanceof AnalyticsError);
    assert.deepEqual({ code: err.code, status: err.status, attempts: err.attempts, retriable: err.retriable }, { code: 'HTTP_ERROR', status: 400, attempts: 1, retriable: false });
    assert.match(err.message, /INVALID_BATCH/);
    await c.flush();
    assert.equal(server.requests.length, 1);
    assert.equal(errors.length, 1);
    assert.equal(errors[0]?.[0], err);
    assert.deepEqual(ids(errors[0]![1]), ['m1']);
  });

  it('gives up after maxRetries retries of a 5xx', async () => {
    server.respond(() => ({ status: 500 }));
    const c = client({ flushAt: 1, maxRetries: 2 });
    const { callback, result } = outcome();
    c.track({ userId: 'u', event: 'E' }, callback);
    const err = await result;
    assert.ok(err instanceof AnalyticsError);
    assert.deepEqual({ code: err.code, status: err.status, attempts: err.attempts, retriable: err.retriable }, { code: 'HTTP_ERROR', status: 500, attempts: 3, retriable: true });
    assert.equal(server.requests.length, 3);
  });

  it('retries network errors and reports NETWORK_ERROR when they persist', async () => {
    server.respond(() => 'destroy');
    const c = client({ flushAt: 1, maxRetries: 1 });
    const { callback, result } = outcome();
    c.track({ userId: 'u', event: 'E' }, callback);
    const err = await result;
    assert.ok(err instanceof AnalyticsError);
    assert.deepEqual({ code: err.code, attempts: err.attempts }, { code: 'NETWORK_ERROR', attempts: 2 });
    assert.equal(server.requests.length, 2);
  });

  it('gives a request timeoutMs to answer, then reports TIMEOUT', async () => {
    server.respond(() => 'hang');
    const c = client({ flushAt: 1, maxRetries: 0, timeoutMs: 100 });
    const { callback, result } = outcome();
    c.track({ userId: 'u', event: 'E' }, callback);
    const err = await result;
    assert.ok(err instanceof AnalyticsError);
    assert.equal(err.code, 'TIMEOUT');
  });

  it('waits as long as Retry-After says on a 429 (fake clock)', async () => {
    server.respond((_req, i) => (i === 0 ? { status: 429, headers: { 'retry-after': '2' } } : undefined));
    const clock = new FakeClock();
    const c = client({ flushAt: 1, clock });
    const pause = clock.nextTimer((ms) => ms !== 10_000); // skips the request timeout timer
    c.track({ userId: 'u', event: 'E' });
    assert.equal(await pause, 2000);
    assert.equal(server.requests.length, 1);
    clock.advance(1999);
    await settle();
    assert.equal(server.requests.length, 1);
    clock.advance(1);
    await c.flush();
    assert.equal(server.requests.length, 2);
  });
});

describe('Analytics: results', () => {
  it('calls each callback once and emits sent with the accepted messages and the request facts', async () => {
    const c = client({ flushAt: 3 });
    const sent: SentBatch[] = [];
    c.on('sent', (b) => sent.push(b));
    const calls: (Error | undefined)[] = [];
    for (let i = 0; i < 3; i++) c.track({ userId: 'u', event: 'E', messageId: `m${i}` }, (err) => calls.push(err));
    await c.flush();
    assert.deepEqual(calls, [undefined, undefined, undefined]);
    assert.equal(sent.length, 1);
    assert.deepEqual({ ...sent[0], messages: ids(sent[0]!.messages) }, { messages: ['m0', 'm1', 'm2'], status: 200, attempts: 1, bytes: server.requests[0]!.bytes, rejected: 0 });
  });

  it('reports a message the server refused inside an accepted batch as MESSAGE_REJECTED', async () => {
    server.respond(() => ({ status: 200, body: { success: true, rejected: [{ index: 1, messageId: 'm1', reason: 'invalid_field', message: 'userId must be a string' }] } }));
    const c = client({ flushAt: 3 });
    const sent: SentBatch[] = [];
    const errors: [AnalyticsError, Message[]][] = [];
    c.on('sent', (b) => sent.push(b));
    c.on('error', (err, messages) => errors.push([err, messages]));
    const calls: (string | undefined)[] = [];
    for (let i = 0; i < 3; i++) c.track({ userId: 'u', event: 'E', messageId: `m${i}` }, (err) => calls.push(err && (err as AnalyticsError).code));
    await c.flush();
    assert.deepEqual(calls.sort(), ['MESSAGE_REJECTED', undefined, undefined]);
    assert.deepEqual(ids(sent[0]!.messages), ['m0', 'm2']);
    assert.equal(sent[0]!.rejected, 1);
    assert.equal(errors[0]?.[0].code, 'MESSAGE_REJECTED');
    assert.match(errors[0]![0].message, /userId must be a string/);
    assert.deepEqual(ids(errors[0]![1]), ['m1']);
  });

  it('does not throw when a delivery fails and nobody listens for error', async () => {
    server.respond(() => ({ status: 401, body: { code: 'INVALID_WRITE_KEY' } }));
    const c = client({ flushAt: 1 });
    c.track({ userId: 'u', event: 'E' });
    await c.flush();
    assert.equal(server.requests.length, 1);
  });
});

describe('Analytics: flush() and close()', () => {
  it('flush() resolves once every message accepted so far was sent, including flushes already in flight', async () => {
    server.respond(() => ({ status: 200, body: { success: true }, delayMs: 100 }));
    const c = client({ flushAt: 2, clock: new FakeClock() });
    const calls: string[] = [];
    c.track({ userId: 'u', event: 'A' }, () => calls.push('A'));
    c.track({ userId: 'u', event: 'B' }, () => calls.push('B')); // flushAt reached: in flight
    c.track({ userId: 'u', event: 'C' }, () => calls.push('C')); // still queued
    await c.flush();
    assert.deepEqual(calls.sort(), ['A', 'B', 'C']);
    assert.equal(c.pending, 0);
  });

  it('flush() resolves, not rejects, when delivery fails; and at once when nothing is queued', async () => {
    server.respond(() => ({ status: 400 }));
    const c = client({ flushAt: 10 });
    const { callback, result } = outcome();
    c.track({ userId: 'u', event: 'E' }, callback);
    await c.flush();
    assert.equal((await result as AnalyticsError).code, 'HTTP_ERROR');
    await c.flush();
    assert.equal(server.requests.length, 1);
  });

  it('close() sends what is queued, stops the timer and refuses later calls with CLIENT_CLOSED', async () => {
    const clock = new FakeClock();
    const c = client({ clock });
    c.track({ userId: 'u', event: 'E' });
    c.identify({ userId: 'u' });
    assert.deepEqual(clock.pendingDelays, [5000]);
    const closing = c.close();
    assert.equal(c.closed, true);
    assert.equal(c.close(), closing, 'a second close() returns the same promise');
    await closing;
    assert.equal(server.messageCount, 2);
    assert.deepEqual(clock.pendingDelays, []);
    for (const call of [() => c.track({ userId: 'u', event: 'E' }), () => c.identify({ userId: 'u' }), () => c.alias({ userId: 'u', previousId: 'p' })]) {
      assert.equal(thrownCode(call), 'CLIENT_CLOSED');
    }
    await c.flush();
    assert.equal(server.requests.length, 1);
  });
});

describe('Analytics: DEBUG logging', () => {
  it('with DEBUG=foo,analytics logs what is queued, sent and received, without the write key', async () => {
    const lines: string[] = [];
    const c = client({ env: { DEBUG: 'foo,analytics' }, logger: (l) => lines.push(l), flushAt: 1 });
    c.track({ userId: 'u', event: 'Signed Up', messageId: 'm-debug' });
    await c.flush();
    const text = lines.join('\n');
    assert.ok(lines.every((l) => l.startsWith('analytics: ')));
    assert.match(text, /queued track m-debug .*Signed Up/);
    assert.match(text, /sending 1 message\(s\), \d+ bytes, to http:\/\/127\.0\.0\.1:\d+\/v1\/batch \(attempt 1\)/);
    assert.match(text, /received 200: \{"success":true\}/);
    assert.match(text, /sent 1 message\(s\)/);
    assert.ok(!text.includes(WRITE_KEY) && !text.includes(Buffer.from(`${WRITE_KEY}:`).toString('base64')));
  });

  it('logs nothing without DEBUG, with DEBUG naming others, or when DEBUG is set after construction', async () => {
    const lines: string[] = [];
    const env: Record<string, string | undefined> = {};
    const quiet = { logger: (l: string) => void lines.push(l), flushAt: 1, maxRetries: 1 };
    const clientsOff = [client({ ...quiet, env }), client({ ...quiet, env: { DEBUG: 'express,analytics-extra' } })];
    env.DEBUG = 'analytics';
    server.respond(() => ({ status: 500 }));
    for (const c of clientsOff) {
      c.track({ userId: 'u', event: 'E' });
      await c.close();
    }
    assert.deepEqual(lines, []);
  });
});
