import type { ServerResponse } from 'node:http';
import type { FastifyInstance } from 'fastify';
import { apiError } from '../admin-errors.js';
import type { ControlDeps } from '../control-deps.js';
import type { Counter } from '@switchyard/platform/metrics';
import type { LiveCall } from '../live-call.js';
import { LiveBuffer } from '../live-buffer.js';
import { LiveTailFullError } from '../live-tail.js';
import { liveCallMetadata } from '../redaction.js';
import { accessOf } from '../scopes.js';
import { sseComment, sseEvent } from '../sse.js';

/** Pending calls per viewer before the oldest are dropped (a call is at most 32 KB). */
export const LIVE_BUFFER_CALLS = 200;
export const HEARTBEAT_MS = 15_000;

/**
 * GET /v1/sources/{id}/live: the source's calls as Server-Sent Events, from now on (nothing
 * historical). Events: `ready` (reading from the end of the topic: later calls will show),
 * `call` (a LiveCall, id = messageId), `dropped` ({count}: calls skipped because this client read
 * too slowly), `end` ({reason}: the server is closing the stream: `shutdown`, or `revoked` once
 * the stream's token is revoked). A comment every 15 s keeps proxies from timing the stream out. The stream is plain fetch-readable: browsers read it with
 * fetch() so the token travels in the Authorization header, never in the URL.
 */
export function liveRoutes(app: FastifyInstance, { view, live }: ControlDeps, opts: { heartbeatMs?: number } = {}): void {
  // A stream outlives its request's authentication: each open one checks, on every configuration
  // change, that its token still exists (one listener for them all, added with the first stream).
  const revocationChecks = new Set<() => void>();
  let watching = false;
  const watchRevocations = () => {
    if (watching) return;
    watching = true;
    view.on('change', () => { for (const check of revocationChecks) check(); });
  };

  app.get<{ Params: { id: string } }>('/v1/sources/:id/live', async (req, reply) => {
    const source = view.state.source(req.params.id);
    if (!source) throw apiError('SOURCE_NOT_FOUND', { id: req.params.id });
    const access = accessOf(req);
    access.requireSource(source.id);
    // A metadata token's stream carries each call without its payload.
    const shown = access.payloads ? (call: LiveCall) => call : liveCallMetadata;

    const res = reply.raw;
    const calls = callWriter(res, live.metrics.dropped);
    let unsubscribe: () => void;
    try {
      unsubscribe = live.subscribe({
        sourceId: source.id,
        onReady: () => { if (!calls.closed) res.write(sseEvent('ready', { sourceId: source.id })); },
        onCall: (call) => calls.push(shown(call)),
        onEnd: (reason) => {
          if (calls.closed) return;
          calls.flush();
          res.end(sseEvent('end', { reason }));
        },
      });
    } catch (err) {
      if (err instanceof LiveTailFullError) throw apiError('LIVE_UNAVAILABLE', { reason: err.message });
      throw err;
    }

    reply.hijack();
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache, no-store, no-transform',
      'x-accel-buffering': 'no',
      connection: 'keep-alive',
    });
    res.write(sseComment(`live calls of source ${source.id}`));
    res.on('drain', calls.onDrain);
    const heartbeat = setInterval(() => { if (!calls.closed) res.write(sseComment('heartbeat')); }, opts.heartbeatMs ?? HEARTBEAT_MS);
    const { tokenId } = access.principal;
    const endIfRevoked = () => {
      if (!calls.closed && tokenId !== null && !view.state.adminToken(tokenId)) res.end(sseEvent('end', { reason: 'revoked' }));
    };
    if (tokenId !== null) {
      watchRevocations();
      revocationChecks.add(endIfRevoked);
    }
    res.on('close', () => {
      calls.close();
      clearInterval(heartbeat);
      revocationChecks.delete(endIfRevoked);
      unsubscribe();
    });
    endIfRevoked();
  });
}

/**
 * Writes a stream's calls: a burst is written once the current tick's calls are in, and while the
 * client reads too slowly the calls received first are dropped (and it is told how many), as the
 * page's own list would.
 */
function callWriter(res: ServerResponse, dropped: Counter) {
  const buffer = new LiveBuffer<LiveCall>(LIVE_BUFFER_CALLS, (call) => Date.parse(call.receivedAt));
  let waitingForDrain = false;
  let closed = false;
  const flush = () => {
    if (closed || waitingForDrain) return;
    const taken = buffer.take();
    if (taken.dropped > 0) {
      dropped.inc(taken.dropped);
      res.write(sseEvent('dropped', { count: taken.dropped }));
    }
    for (const call of taken.items) {
      if (!res.write(sseEvent('call', call, call.messageId))) waitingForDrain = true;
    }
  };
  return {
    get closed() { return closed; },
    close: () => { closed = true; },
    push: (call: LiveCall) => {
      buffer.push(call);
      if (buffer.size === 1) setImmediate(flush);
    },
    flush,
    onDrain: () => { waitingForDrain = false; flush(); },
  };
}
