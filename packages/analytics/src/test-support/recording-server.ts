// A stand-in for the ingest service: a real HTTP server on 127.0.0.1, port 0, that records every
// request and answers 200 {"success":true} unless a test sets a responder.
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Message } from '../messages.js';

export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  /** Body size in bytes, as received. */
  bytes: number;
  /** The raw body; empty when the server was started with keepBodies: false. */
  text: string;
}

export interface BatchBody {
  batch: Message[];
  sentAt: string;
  context: { library: { name: string; version: string } };
}

export type Reply = { status: number; body?: unknown; headers?: Record<string, string>; delayMs?: number } | 'hang' | 'destroy';
export type Responder = (req: RecordedRequest, index: number) => Reply | undefined;

export interface RecordingServer {
  url: string;
  requests: RecordedRequest[];
  /** Messages received, across requests (counted even without keepBodies). */
  messageCount: number;
  /** The most requests that were being answered at the same time. */
  maxConcurrent: number;
  /** TCP connections accepted. */
  connections: number;
  respond(responder: Responder | undefined): void;
  /** Resolves once at least n requests arrived; rejects after timeoutMs. */
  waitForRequests(n: number, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

export function bodyOf(req: RecordedRequest): BatchBody {
  return JSON.parse(req.text) as BatchBody;
}

export async function startRecordingServer(opts: { keepBodies?: boolean } = {}): Promise<RecordingServer> {
  const keepBodies = opts.keepBodies ?? true;
  const requests: RecordedRequest[] = [];
  const waiters = new Set<() => void>();
  const hanging = new Set<ServerResponse>();
  let responder: Responder | undefined;
  const state = { messageCount: 0, active: 0, maxConcurrent: 0, connections: 0 };

  const server = createServer((req, res) => {
    state.active++;
    state.maxConcurrent = Math.max(state.maxConcurrent, state.active);
    res.on('close', () => void state.active--);
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      const text = raw.toString('utf8');
      try {
        state.messageCount += (JSON.parse(text) as BatchBody).batch.length;
      } catch { /* not a batch; the test will notice */ }
      const recorded: RecordedRequest = { method: req.method ?? '', path: req.url ?? '', headers: req.headers, bytes: raw.length, text: keepBodies ? text : '' };
      const index = requests.push(recorded) - 1;
      const reply = responder?.(recorded, index) ?? { status: 200, body: { success: true } };
      for (const wake of waiters) wake();
      if (reply === 'hang') return void hanging.add(res);
      if (reply === 'destroy') return void req.socket.destroy();
      const answer = () => res.writeHead(reply.status, { 'content-type': 'application/json', ...reply.headers }).end(reply.body === undefined ? '' : JSON.stringify(reply.body));
      if (reply.delayMs) setTimeout(answer, reply.delayMs);
      else answer();
    });
  });
  server.on('connection', () => void state.connections++);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    get messageCount() {
      return state.messageCount;
    },
    get maxConcurrent() {
      return state.maxConcurrent;
    },
    get connections() {
      return state.connections;
    },
    respond: (r) => void (responder = r),
    waitForRequests(n, timeoutMs = 5_000) {
      return new Promise<void>((resolve, reject) => {
        const check = () => {
          if (requests.length < n) return;
          clearTimeout(timer);
          waiters.delete(check);
          resolve();
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`expected ${n} request(s), got ${requests.length} in ${timeoutMs} ms`));
        }, timeoutMs);
        waiters.add(check);
        check();
      });
    },
    close: () =>
      new Promise<void>((resolve, reject) => {
        for (const res of hanging) res.destroy();
        server.closeAllConnections();
        server.close((err) => (err ? reject(err) : resolve()));
      }),
  };
}
