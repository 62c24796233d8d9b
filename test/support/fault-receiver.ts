// A webhook receiver for the fault suites: a real HTTP server on 127.0.0.1 whose behaviour can be
// switched while events flow (down, hanging, dripping its answer byte by byte, resetting
// connections, failing), and which counts what it accepted by messageId. An event counts as
// delivered only when a 2xx answer was written out completely: an answer the sender gave up on
// (timeout, reset) is not a delivery, so redeliveries the service makes after it are not duplicates.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

export type FaultMode =
  /** 200 at once. */
  | 'ok'
  /** Not listening: connections are refused. */
  | 'down'
  /** Reads the request and never answers. */
  | 'hang'
  /** Answers 200 but writes the body one byte every `slowByteMs`. */
  | 'slow'
  /** Reads the request and resets the connection (TCP RST). */
  | 'reset'
  /** Answers 503. */
  | 'unavailable';

export interface AcceptedCall {
  messageId: string | undefined;
  body: Record<string, unknown>;
  at: number;
  /**
   * When the sender started this request, to the second (its `webhook-timestamp` header, with
   * Standard Webhooks on): an answer written `at` a sender's timeout or more after it may have come
   * after the sender gave up, and a copy sent after it is the sender's at-least-once, not a defect.
   */
  sentAtSecond?: number;
}

export interface FaultReceiverOptions {
  /** Per-byte delay of the `slow` mode. */
  slowByteMs?: number;
  /** Answers 503 to the first request of the messageIds it selects (those tasks pass through a retry tier). */
  failFirstAttempt?: (messageId: string) => boolean;
}

export class FaultReceiver {
  /** Requests whose body arrived whole, whatever was answered. */
  requests = 0;
  readonly accepted: AcceptedCall[] = [];
  /** Every request: when, in which mode, for which messageId (diagnostics of a duplicate or a loss). */
  readonly log: Array<{ messageId: string | undefined; at: number; mode: FaultMode; headers: IncomingMessage['headers'] }> = [];
  private readonly deliveries = new Map<string, number>();
  private readonly seen = new Set<string>();
  private mode: FaultMode = 'ok';
  private lastAt = Date.now();
  private port = 0;
  private readonly sockets = new Set<Socket>();
  private readonly server = createServer((req, res) => this.handle(req, res));

  constructor(private readonly opts: FaultReceiverOptions = {}) {
    this.server.keepAliveTimeout = 60_000;
    this.server.on('connection', (s) => { this.sockets.add(s); s.on('close', () => this.sockets.delete(s)); });
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}/hook`;
  }

  async start(): Promise<this> {
    await this.listen();
    return this;
  }

  /** Switches behaviour; `down` closes the listener and every open connection, leaving it listens again on the same port. */
  async setMode(mode: FaultMode): Promise<void> {
    const was = this.mode;
    this.mode = mode;
    if (mode === 'down' && was !== 'down') {
      for (const s of this.sockets) s.destroy();
      await new Promise<void>((resolve) => this.server.close(() => resolve()));
    } else if (mode !== 'down' && was === 'down') {
      await this.listen();
    }
    // Answers left hanging are abandoned, as by a restarted receiver.
    if (was === 'hang' && mode !== 'hang') for (const s of this.sockets) if ((s as Socket & { hung?: boolean }).hung) s.destroy();
  }

  /** How many times each messageId was accepted. */
  deliveredCount(messageId: string): number {
    return this.deliveries.get(messageId) ?? 0;
  }

  /** When the last request arrived (quiescence). */
  get lastActivity(): number {
    return this.lastAt;
  }

  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    if (this.server.listening) await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private async listen(): Promise<void> {
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(this.port, '127.0.0.1', () => { this.server.off('error', reject); resolve(); });
    });
    this.port = (this.server.address() as { port: number }).port;
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      this.requests++;
      this.lastAt = Date.now();
      let body: Record<string, unknown> = {};
      try { body = JSON.parse(Buffer.concat(chunks).toString('utf8')); } catch { /* counted, not parsed */ }
      const messageId = typeof body.messageId === 'string' ? body.messageId : undefined;
      const mode = this.mode;
      this.log.push({ messageId, at: this.lastAt, mode, headers: req.headers });
      if (mode === 'down') { req.socket.destroy(); return; }
      if (mode === 'reset') { req.socket.resetAndDestroy(); return; }
      if (mode === 'hang') { (req.socket as Socket & { hung?: boolean }).hung = true; return; }
      if (mode === 'unavailable' || (messageId && this.opts.failFirstAttempt?.(messageId) && !this.seen.has(messageId))) {
        if (messageId) this.seen.add(messageId);
        res.writeHead(503, { 'content-type': 'application/json' }).end('{"error":"try later"}');
        return;
      }
      const stamp = Number(req.headers['webhook-timestamp']);
      const accept = () => {
        this.accepted.push({ messageId, body, at: Date.now(), ...(Number.isFinite(stamp) && stamp > 0 ? { sentAtSecond: stamp } : {}) });
        if (messageId) this.deliveries.set(messageId, (this.deliveries.get(messageId) ?? 0) + 1);
      };
      if (mode === 'slow') {
        const text = Buffer.from('{"ok":true,"note":"slow answer"}');
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(text.length) });
        let i = 0;
        const drip = () => {
          if (res.destroyed) return;
          if (i >= text.length) { res.end(); return; }
          res.write(text.subarray(i, ++i));
          setTimeout(drip, this.opts.slowByteMs ?? 100);
        };
        res.on('finish', accept);
        drip();
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}', accept);
    });
  }
}
