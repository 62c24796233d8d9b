// The benchmark's webhook receiver: a bare node:http server on 127.0.0.1 (keep-alive) that finds
// each body's messageId with a string search (no JSON.parse), records the first arrival time per
// messageId and counts duplicates, and answers as the scenario scripts it (status, delay, hang).
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';

export type ReceiverMode = { status?: number; delayMs?: number; hang?: boolean };

export interface BenchReceiver {
  url: string;
  /** First arrival time (ms, this process's clock) per messageId. */
  arrivals: Map<string, number>;
  requests(): number;
  duplicates(): number;
  /** Changes how the following requests are answered. */
  setMode(mode: ReceiverMode): void;
  /** Resolves when every id has arrived (2xx answered), or rejects after timeoutMs. */
  waitForAll(ids: Iterable<string>, timeoutMs: number): Promise<void>;
  /** Forgets what arrived (between phases). */
  reset(): void;
  close(): Promise<void>;
}

const MARK = '"messageId":"';

export function messageIdOf(text: string): string | undefined {
  const i = text.indexOf(MARK);
  if (i < 0) return undefined;
  const end = text.indexOf('"', i + MARK.length);
  return end < 0 ? undefined : text.slice(i + MARK.length, end);
}

export async function startBenchReceiver(initial: ReceiverMode = {}): Promise<BenchReceiver> {
  let mode = initial;
  let requests = 0;
  let duplicates = 0;
  const arrivals = new Map<string, number>();
  const hung = new Set<ServerResponse>();
  const handler = (req: IncomingMessage, res: ServerResponse) => {
    let text = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => { text += c; });
    req.on('end', () => {
      requests++;
      const m = mode;
      if (m.hang) { hung.add(res); res.on('close', () => hung.delete(res)); return; }
      const status = m.status ?? 200;
      const answer = () => {
        // Only a 2xx answer counts as delivered: that is when delivery considers it done.
        if (status >= 200 && status < 300) {
          const id = messageIdOf(text);
          if (id !== undefined) { if (arrivals.has(id)) duplicates++; else arrivals.set(id, Date.now()); }
        }
        res.writeHead(status, { 'content-type': 'application/json', 'content-length': '11' }).end('{"ok":true}');
      };
      if (m.delayMs) setTimeout(answer, m.delayMs); else answer();
    });
  };
  const server = createServer({ keepAlive: true }, handler);
  server.keepAliveTimeout = 60_000;
  server.headersTimeout = 65_000;
  server.requestTimeout = 0;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}/hook`,
    arrivals,
    requests: () => requests,
    duplicates: () => duplicates,
    setMode: (m) => { mode = m; },
    async waitForAll(ids, timeoutMs) {
      const list = [...ids];
      const deadline = Date.now() + timeoutMs;
      let i = 0;
      for (;;) {
        while (i < list.length && arrivals.has(list[i]!)) i++;
        if (i === list.length) return;
        if (Date.now() > deadline) throw new Error(`receiver: ${list.length - countArrived(list, arrivals)} of ${list.length} events not delivered within ${timeoutMs} ms`);
        await new Promise((r) => setTimeout(r, 20));
      }
    },
    reset: () => { arrivals.clear(); requests = 0; duplicates = 0; },
    close: () => new Promise<void>((resolve) => { for (const res of hung) res.destroy(); server.closeAllConnections(); server.close(() => resolve()); }),
  };
}

export function countArrived(ids: Iterable<string>, arrivals: Map<string, number>): number {
  let n = 0;
  for (const id of ids) if (arrivals.has(id)) n++;
  return n;
}
