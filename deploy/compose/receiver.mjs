// The demo webhook receiver of docker-compose.yml, written as a customer would: it verifies
// X-Signature as the webhooks document describes (JSON-stringify the parsed body, HMAC-SHA1 with
// the shared secret, lower-case hex, compare) and logs one line per call. Plain JavaScript with no
// dependencies, so it runs in the public Node image (tools/demo/receiver.ts is the same for npm start).
import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer } from 'node:http';

const port = Number(process.env.RECEIVER_PORT ?? 8090);
const secret = process.env.DEMO_SHARED_SECRET || undefined;

function signatureValid(body, header) {
  if (secret === undefined) return undefined;
  if (typeof header !== 'string') return false;
  const expected = createHmac('sha1', secret).update(JSON.stringify(body), 'utf8').digest('hex');
  return header.length === expected.length && timingSafeEqual(Buffer.from(header), Buffer.from(expected));
}

const server = createServer((req, res) => {
  if (req.method === 'GET' && req.url === '/healthz') return void res.writeHead(200).end('ok');
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    let body;
    try { body = JSON.parse(Buffer.concat(chunks).toString('utf8')); } catch { return void res.writeHead(400).end('body is not JSON'); }
    const valid = signatureValid(body, req.headers['x-signature']);
    console.log(JSON.stringify({ msg: 'received', path: req.url, signature: valid === undefined ? 'unchecked' : valid ? 'valid' : 'INVALID', body }));
    res.writeHead(valid === false ? 401 : 200, { 'content-type': 'application/json' }).end('{"ok":true}');
  });
});
server.listen(port, '0.0.0.0', () => console.log(JSON.stringify({ msg: 'demo receiver listening', port })));
for (const sig of ['SIGTERM', 'SIGINT']) process.once(sig, () => server.close(() => process.exit(0)));
