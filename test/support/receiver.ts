// Real webhook receivers for tests: HTTP (or HTTPS with a self-signed certificate made at test
// time) servers on 127.0.0.1 that record every request and answer as each test scripts them.
import { execFileSync } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { mkdtempSync, readFileSync } from 'node:fs';
import { createServer as createHttp, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttps } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface ReceivedRequest {
  path: string;
  headers: IncomingMessage['headers'];
  text: string;
  at: number;
}

/** What to do with a request: status (default 200), a delay, or never answer. */
export type Behaviour = { status?: number; delayMs?: number; hang?: boolean; headers?: Record<string, string>; body?: string };

export interface Receiver {
  url: string;
  requests: ReceivedRequest[];
  /** Requests (HTTP, not TLS handshakes) seen, including hung ones. */
  count(): number;
  /** Received bodies whose parsed messageId is given. */
  forMessage(messageId: string): ReceivedRequest[];
  waitFor(predicate: (requests: ReceivedRequest[]) => boolean, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

export async function startReceiver(behave: (req: ReceivedRequest, index: number) => Behaviour = () => ({}), opts: { https?: boolean } = {}): Promise<Receiver> {
  const requests: ReceivedRequest[] = [];
  const hung: ServerResponse[] = [];
  const handler = (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const received = { path: req.url ?? '', headers: req.headers, text: Buffer.concat(chunks).toString('utf8'), at: Date.now() };
      requests.push(received);
      const b = behave(received, requests.length - 1);
      if (b.hang) { hung.push(res); return; }
      const answer = () => res.writeHead(b.status ?? 200, { 'content-type': 'application/json', ...b.headers }).end(b.body ?? '{"ok":true}');
      if (b.delayMs) setTimeout(answer, b.delayMs); else answer();
    });
  };
  const server: Server = opts.https ? createHttps(selfSignedCertificate(), handler) : createHttp(handler);
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  // Each body parsed once, when first asked about: a test that checks 10 000 messageIds against
  // 10 000 requests parsed 10^8 bodies (the replay test spent 166 s of its 186 there).
  const messages = new Map<string, ReceivedRequest[]>();
  let indexed = 0;
  const byMessage = (messageId: string): ReceivedRequest[] => {
    for (; indexed < requests.length; indexed++) {
      const r = requests[indexed]!;
      let id: unknown;
      try { id = (JSON.parse(r.text) as { messageId?: unknown }).messageId; } catch { continue; }
      if (typeof id !== 'string') continue;
      const list = messages.get(id);
      if (list) list.push(r); else messages.set(id, [r]);
    }
    return [...(messages.get(messageId) ?? [])];
  };
  return {
    url: `${opts.https ? 'https' : 'http'}://127.0.0.1:${port}/hook`,
    requests,
    count: () => requests.length,
    forMessage: (messageId) => byMessage(messageId),
    async waitFor(predicate, timeoutMs = 20_000) {
      const deadline = Date.now() + timeoutMs;
      while (!predicate(requests)) {
        if (Date.now() > deadline) throw new Error(`receiver condition not met within ${timeoutMs} ms (${requests.length} requests)`);
        await new Promise((r) => setTimeout(r, 50));
      }
    },
    close: () => new Promise<void>((resolve) => { for (const res of hung) res.destroy(); server.closeAllConnections(); server.close(() => resolve()); }),
  };
}

/** The webhooks document's verification: re-stringify the parsed body, HMAC-SHA1 with the secret, compare hex. */
export function signatureValid(req: ReceivedRequest, secret: string): boolean {
  const expected = createHmac('sha1', secret).update(JSON.stringify(JSON.parse(req.text)), 'utf8').digest('hex');
  return req.headers['x-signature'] === expected;
}

let certificate: { key: Buffer; cert: Buffer } | undefined;
/** A self-signed certificate for 127.0.0.1, made with openssl the first time it is needed. */
export function selfSignedCertificate(): { key: Buffer; cert: Buffer } {
  if (certificate) return certificate;
  const dir = mkdtempSync(join(tmpdir(), 'switchyard-cert-'));
  execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem'), '-days', '1', '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1'], { stdio: 'ignore' });
  certificate = { key: readFileSync(join(dir, 'key.pem')), cert: readFileSync(join(dir, 'cert.pem')) };
  return certificate;
}
