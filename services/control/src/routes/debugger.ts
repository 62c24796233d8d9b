import { readdirSync, readFileSync } from 'node:fs';
import { extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance, FastifyReply } from 'fastify';

/** services/control/debugger/, from src/routes/ (development) and from dist/routes/ (production) alike. */
export const DEBUGGER_DIR = fileURLToPath(new URL('../../debugger/', import.meta.url));

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
};

/**
 * Nothing but this server: no inline script, no external fonts or CDNs, no framing. The page
 * holds the admin token, so it must not load anything it did not come with.
 */
const SECURITY_HEADERS = {
  'content-security-policy': "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-cache',
};

/**
 * The debugger page at /debugger: a few static files (HTML, its ES modules, CSS), every such file
 * of the folder read once at start and served from memory. The page itself is public; every call it
 * makes for data carries the admin token, which the visitor types in.
 */
export function debuggerRoutes(app: FastifyInstance, dir = DEBUGGER_DIR): void {
  const files = new Map<string, { body: Buffer; type: string }>();
  for (const name of readdirSync(dir)) {
    const type = TYPES[extname(name)];
    if (type) files.set(name, { body: readFileSync(join(dir, name)), type });
  }
  const send = (reply: FastifyReply, name: string) => {
    const file = files.get(name);
    // A file the page does not have is a route that does not exist: the server's NOT_FOUND.
    if (!file) return reply.callNotFound();
    return reply.headers(SECURITY_HEADERS).type(file.type).send(file.body);
  };
  app.get('/debugger', async (_req, reply) => send(reply, 'index.html'));
  app.get('/debugger/', async (_req, reply) => send(reply, 'index.html'));
  app.get<{ Params: { file: string } }>('/debugger/:file', async (req, reply) => send(reply, req.params.file));
}
