// A webhook receiver as a customer would write one: it verifies X-Signature exactly as the
// webhooks document describes (JSON-stringify the parsed body, HMAC-SHA1 with the shared secret,
// lower-case hex, compare) and logs each call. `npm start` runs it as the demo destination.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type Server } from 'node:http';

export interface ReceivedCall {
  body: unknown;
  headers: Record<string, string | string[] | undefined>;
  signatureValid: boolean | undefined;
}

export interface ReceiverOptions {
  port: number;
  host?: string;
  /** When set, X-Signature is checked; otherwise signatureValid is undefined. */
  sharedSecret?: string;
  onCall?: (call: ReceivedCall) => void;
}

export function verifySignature(parsedBody: unknown, header: string | undefined, secret: string): boolean {
  if (!header) return false;
  const expected = createHmac('sha1', secret).update(JSON.stringify(parsedBody), 'utf8').digest('hex');
  const given = Buffer.from(header);
  return given.length === expected.length && timingSafeEqual(given, Buffer.from(expected));
}

export function startReceiver({ port, host = '127.0.0.1', sharedSecret, onCall }: ReceiverOptions): Promise<Server> {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      let body: unknown;
      try { body = JSON.parse(Buffer.concat(chunks).toString('utf8')); } catch { res.writeHead(400).end('body is not JSON'); return; }
      const header = req.headers['x-signature'];
      const signatureValid = sharedSecret === undefined ? undefined : verifySignature(body, typeof header === 'string' ? header : undefined, sharedSecret);
      onCall?.({ body, headers: req.headers, signatureValid });
      res.writeHead(signatureValid === false ? 401 : 200, { 'content-type': 'application/json' }).end('{"ok":true}');
    });
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve(server));
  });
}
