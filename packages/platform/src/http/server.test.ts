import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { describe, it } from 'node:test';
import { Lifecycle } from '../lifecycle.js';
import { createLogger } from '../logger.js';
import { createMetricsRegistry } from '../metrics.js';
import { RegistryUnavailableError } from '../errors.js';
import { ErrorCatalogue } from './error-catalogue.js';
import { serverErrors } from './server-errors.js';
import { createServer } from './server.js';

function server(errors = new ErrorCatalogue(serverErrors)) {
  const logger = createLogger({ service: 'test', level: 'silent' });
  return createServer({ logger, metrics: createMetricsRegistry('test'), readiness: new Lifecycle(logger).readiness, errors });
}

describe('createServer: every error is {code, message} from the catalogue', () => {
  it('answers failures that are not refusals from the catalogue: a retriable Switchyard error is UNAVAILABLE, anything else INTERNAL with nothing of the error shown', async () => {
    const app = server();
    app.get('/registry', async () => { throw new RegistryUnavailableError('registry at 10.0.0.1:8081 refused'); });
    app.get('/bug', async () => { throw new TypeError('secret detail'); });
    assert.deepEqual([(await app.inject('/registry')).statusCode, (await app.inject('/registry')).json()], [503, { code: 'UNAVAILABLE', message: serverErrors.UNAVAILABLE.message }]);
    assert.deepEqual([(await app.inject('/bug')).statusCode, (await app.inject('/bug')).json()], [500, { code: 'INTERNAL', message: 'internal error' }]);
    await app.close();
  });

  it('answers fastify\'s refusals with the statuses of the service\'s own catalogue (the tracking API\'s 400 for a body too large)', async () => {
    const app = server(new ErrorCatalogue({ ...serverErrors, BODY_TOO_LARGE: { status: 400, message: ({ limitBytes }: { limitBytes: number }) => `over ${limitBytes} bytes` } }));
    app.post('/in', { bodyLimit: 10 }, async () => ({}));
    const res = await app.inject({ method: 'POST', url: '/in', payload: { text: 'more than ten bytes' } });
    assert.deepEqual([res.statusCode, res.json()], [400, { code: 'BODY_TOO_LARGE', message: 'over 10 bytes' }]);
    await app.close();
  });

  it('while closing, a request on a connection still open is answered 503 SHUTTING_DOWN, as {code, message}', async () => {
    const app = server();
    const signal = () => { let done!: () => void; const promise = new Promise<void>((resolve) => { done = resolve; }); return { promise, done }; };
    const slowArrived = signal(); const release = signal(); const closing = signal(); const refused = signal();
    app.get('/slow', async () => { slowArrived.done(); await release.promise; return { ok: true }; });
    // preClose hooks run in order: the server's own (which starts refusing) first.
    app.addHook('preClose', async () => closing.done());
    app.addHook('onError', async () => refused.done());
    await app.listen({ host: '127.0.0.1', port: 0 });
    const { port } = app.server.address() as { port: number };
    const socket = connect(port, '127.0.0.1');
    let text = '';
    socket.on('data', (chunk) => { text += chunk.toString('utf8'); });
    const ended = new Promise<void>((resolve) => socket.on('close', () => resolve()));
    socket.write('GET /slow HTTP/1.1\r\nHost: t\r\n\r\n');
    await slowArrived.promise;
    const closed = app.close();
    await closing.promise;
    // A second request on the connection the first keeps open, sent once close has begun.
    socket.write('GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n');
    await refused.promise;
    release.done();
    await Promise.all([ended, closed]);
    const second = text.slice(text.indexOf('HTTP/1.1', 1));
    assert.match(second, /^HTTP\/1\.1 503 /);
    assert.match(second, /connection: close/i);
    assert.deepEqual(JSON.parse(second.slice(second.indexOf('\r\n\r\n') + 4)), { code: 'SHUTTING_DOWN', message: serverErrors.SHUTTING_DOWN.message });
  });
});
