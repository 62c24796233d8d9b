// A stand-in for the admin API in unit tests: a real HTTP server on a free port that records
// every request and answers the canned response set for its method and path.
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RecordedRequest {
  method: string;
  /** Path with the query string, exactly as sent (still percent-encoded). */
  path: string;
  headers: IncomingHttpHeaders;
  /** The parsed JSON body, or undefined when there was none. */
  body: unknown;
}

export interface CannedResponse {
  status: number;
  /** JSON-encoded unless it is a string, which is sent as is (to fake non-JSON answers). */
  body?: unknown;
}

export interface FakeAdminApi {
  url: string;
  requests: RecordedRequest[];
  /** Answers `method path` with response until reset. */
  /** A function answers each request afresh (a resource that changes between polls). */
  on(method: string, path: string, response: CannedResponse | (() => CannedResponse)): void;
  /** The one request since the last reset; fails the test if there were none or several. */
  only(): RecordedRequest;
  reset(): void;
  close(): Promise<void>;
}

export async function startFakeAdminApi(): Promise<FakeAdminApi> {
  const requests: RecordedRequest[] = [];
  const routes = new Map<string, CannedResponse | (() => CannedResponse)>();
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const path = req.url ?? '';
      requests.push({ method: req.method ?? '', path, headers: req.headers, body: text === '' ? undefined : JSON.parse(text) });
      const entry = routes.get(`${req.method} ${path}`);
      const canned = (typeof entry === 'function' ? entry() : entry) ?? { status: 404, body: { code: 'NOT_FOUND', message: `no canned response for ${req.method} ${path}` } };
      if (canned.body === undefined) {
        res.writeHead(canned.status).end();
      } else if (typeof canned.body === 'string') {
        res.writeHead(canned.status, { 'content-type': 'text/plain' }).end(canned.body);
      } else {
        res.writeHead(canned.status, { 'content-type': 'application/json' }).end(JSON.stringify(canned.body));
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    on: (method, path, response) => void routes.set(`${method} ${path}`, response),
    only() {
      if (requests.length !== 1) throw new Error(`expected exactly one request, got ${requests.length}`);
      return requests[0] as RecordedRequest;
    },
    reset() {
      requests.length = 0;
      routes.clear();
    },
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((err) => (err ? reject(err) : resolve()));
      }),
  };
}
