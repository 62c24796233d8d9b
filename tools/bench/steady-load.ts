// A steady load as an SDK sends it through a load balancer: batches of track calls at a fixed rate
// (open loop: a slow answer does not slow the sending), round robin over the ingest instances
// running now, and a request that fails (refused connection, 5xx, 429) sent again to the next
// instance until it is acknowledged, so that a fault costs waiting, never an event. Records when
// each call was acknowledged, the longest wait for one answer and the longest wait from a batch's
// first send to its acknowledgement.
import { setTimeout as sleep } from 'node:timers/promises';
import { Agent, request } from 'undici';
import { trackCall } from './load.js';

export interface SteadyLoadOptions {
  /** The origins of the ingest instances running now (read at every send). */
  targets: () => string[];
  headers: Record<string, string>;
  callsPerS: number;
  batchSize: number;
  runId: string;
  label: string;
  /** A batch not acknowledged after this long is given up (and its calls counted as such). */
  giveUpMs?: number;
}

/** Between two sends of a refused batch: a refusal is the answer of a moment (a leader election, an instance stopping). */
const RESEND_AFTER_MS = 100;

export class SteadyLoad {
  /** Every call sent, in order. */
  readonly ids: string[] = [];
  /** When each call's batch got its 2xx (ms, this process's clock). */
  readonly acked = new Map<string, number>();
  /** Answers by status (or transport error code). */
  readonly statuses = new Map<string, number>();
  /** The longest wait for one answer of ingest (any status), ms. */
  answerMaxMs = 0;
  /** The longest wait from a batch's first send to its acknowledgement, ms. */
  ackMaxMs = 0;
  resends = 0;
  givenUp = 0;
  /** Calls refused for good (a 4xx other than 429): the load is wrong, not the pipeline. */
  rejected = 0;
  // Enough connections for every batch sent during the longest outage (50/s for 40 s): a wait here would count as ingest's.
  private readonly agent = new Agent({ keepAliveTimeout: 10_000, connections: 2048 });
  private readonly inFlight = new Set<Promise<void>>();
  private timer: NodeJS.Timeout | undefined;
  private next = 0;

  constructor(private readonly o: SteadyLoadOptions) {}

  start(): this {
    const intervalMs = (1000 * this.o.batchSize) / this.o.callsPerS;
    const t0 = Date.now();
    let sent = 0;
    const tick = () => {
      while (t0 + sent * intervalMs <= Date.now()) { sent++; this.sendBatch(); }
      this.timer = setTimeout(tick, Math.max(1, t0 + sent * intervalMs - Date.now()));
    };
    tick();
    return this;
  }

  /** Stops sending new batches and waits for every batch in flight to be acknowledged or given up. */
  async stop(): Promise<void> {
    clearTimeout(this.timer);
    while (this.inFlight.size) await Promise.all([...this.inFlight]);
    await this.agent.close();
  }

  private sendBatch(): void {
    const calls = Array.from({ length: this.o.batchSize }, () => trackCall(this.o.runId, this.o.label));
    const ids = calls.map((c) => c.id);
    this.ids.push(...ids);
    const body = JSON.stringify({ batch: calls.map((c) => c.call), sentAt: new Date().toISOString() });
    const sending = this.untilAcknowledged(body, ids).finally(() => this.inFlight.delete(sending));
    this.inFlight.add(sending);
  }

  private async untilAcknowledged(body: string, ids: string[]): Promise<void> {
    const first = Date.now();
    for (;;) {
      const targets = this.o.targets();
      const origin = targets[this.next++ % targets.length]!;
      const t = Date.now();
      let status: string;
      try {
        const res = await request(`${origin}/v1/batch`, { method: 'POST', headers: { 'content-type': 'application/json', ...this.o.headers }, body, dispatcher: this.agent, headersTimeout: 120_000, bodyTimeout: 120_000 });
        await res.body.text();
        status = String(res.statusCode);
        this.answerMaxMs = Math.max(this.answerMaxMs, Date.now() - t);
      } catch (err) {
        status = (err as { code?: string }).code ?? 'error';
      }
      this.statuses.set(status, (this.statuses.get(status) ?? 0) + 1);
      const now = Date.now();
      if (status.startsWith('2')) {
        for (const id of ids) this.acked.set(id, now);
        this.ackMaxMs = Math.max(this.ackMaxMs, now - first);
        return;
      }
      if (status.startsWith('4') && status !== '429') { this.rejected += ids.length; return; }
      if (now - first > (this.o.giveUpMs ?? 120_000)) { this.givenUp += ids.length; return; }
      this.resends++;
      await sleep(RESEND_AFTER_MS);
    }
  }
}
