import { registerSecret, registerSecretsIn } from './secrets.js';

/** JSON over fetch for tests: returns status, parsed body and the raw text. Secrets sent or received are registered for the log scan. */
export async function requestJson(method: string, url: string, opts: { token?: string; body?: unknown; headers?: Record<string, string> } = {}): Promise<{ status: number; body: any; text: string }> {
  const headers: Record<string, string> = { ...opts.headers };
  if (opts.token) { headers.authorization = `Bearer ${opts.token}`; registerSecret(opts.token, 'admin token'); }
  registerSecretsIn(opts.body, `${method} ${routeFamily(url)}`);
  if (opts.body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(url, { method, headers, body: opts.body === undefined ? undefined : JSON.stringify(opts.body) });
  const text = await res.text();
  let body: unknown;
  try { body = text ? JSON.parse(text) : undefined; } catch { body = undefined; }
  registerSecretsIn(body, `response of ${method} ${routeFamily(url)}`);
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests read arbitrary JSON shapes
  return { status: res.status, body: body as any, text };
}

/** `/v1/sources` of any URL under it: a label that never carries an id or a write key from the path. */
function routeFamily(url: string): string {
  return new URL(url).pathname.split('/').slice(0, 3).join('/');
}
