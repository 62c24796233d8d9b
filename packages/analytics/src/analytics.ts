import { randomUUID } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { splitIntoBatches } from './batch-body.js';
import { sendBatch, type SenderDeps } from './batch-sender.js';
import type { Timer } from './clock.js';
import { ConcurrencyLimit } from './concurrency-limit.js';
import { debugLogger, excerpt, type Logger } from './debug-log.js';
import { AnalyticsError } from './errors.js';
import { buildMessage } from './message-rules.js';
import type { AliasMessage, Callback, CallType, GroupMessage, IdentifyMessage, Message, PageMessage, ScreenMessage, TrackMessage } from './messages.js';
import { resolveOptions, type AnalyticsOptions, type ResolvedOptions } from './options.js';
import { RETRY_DEFAULTS } from './retry-policy.js';

/** What the `sent` event carries: one request the server answered with 2xx. */
export interface SentBatch {
  /** The messages the server accepted, in the order sent. */
  messages: Message[];
  status: number;
  /** Requests made for this batch (1 unless it was retried). */
  attempts: number;
  /** Size of the request body. */
  bytes: number;
  /** Messages of this batch the server refused; each also gets an `error` event. */
  rejected: number;
}

export type AnalyticsEvents = {
  sent: [batch: SentBatch];
  /** Emitted only when a listener is attached: a background failure never throws. */
  error: [error: AnalyticsError, messages: Message[]];
};

interface Entry {
  message: Message;
  json: string;
  bytes: number;
  callback: Callback | undefined;
}

/**
 * The client. A call validates and queues its message and returns at once; flushes run in the
 * background when `flushAt` messages wait or `flushAfter` ms have passed since the last flush.
 * A flush sends its batches one after another (order kept); several flushes may be in flight,
 * up to maxConcurrentRequests requests at once.
 */
export class Analytics extends EventEmitter<AnalyticsEvents> {
  readonly #options: ResolvedOptions;
  readonly #sender: SenderDeps;
  readonly #log: Logger | undefined;
  readonly #requests: ConcurrencyLimit;
  #queue: Entry[] = [];
  /** Messages accepted and not yet settled: waiting in #queue or in a flush in flight. */
  #held = 0;
  readonly #inFlight = new Set<Promise<void>>();
  #timer: Timer | undefined;
  #lastFlushAt: number;
  #closing: Promise<void> | undefined;

  constructor(writeKey: string, options: AnalyticsOptions = {}) {
    super();
    const o = resolveOptions(writeKey, options);
    this.#options = o;
    this.#log = debugLogger(o.debug, o.logger);
    this.#sender = { url: o.batchUrl, writeKey: o.writeKey, fetch: o.fetch, clock: o.clock, timeoutMs: o.timeoutMs, policy: { ...RETRY_DEFAULTS, maxRetries: o.maxRetries }, log: this.#log };
    this.#requests = new ConcurrencyLimit(o.maxConcurrentRequests);
    this.#lastFlushAt = o.clock.now();
    this.#log?.(`client created: ${o.batchUrl}, flushAt ${o.flushAt}, flushAfter ${o.flushAfter} ms`);
  }

  identify(message: IdentifyMessage, callback?: Callback): void {
    this.#enqueue('identify', message, callback);
  }

  track(message: TrackMessage, callback?: Callback): void {
    this.#enqueue('track', message, callback);
  }

  page(message: PageMessage, callback?: Callback): void {
    this.#enqueue('page', message, callback);
  }

  screen(message: ScreenMessage, callback?: Callback): void {
    this.#enqueue('screen', message, callback);
  }

  group(message: GroupMessage, callback?: Callback): void {
    this.#enqueue('group', message, callback);
  }

  alias(message: AliasMessage, callback?: Callback): void {
    this.#enqueue('alias', message, callback);
  }

  /** Messages accepted and not yet sent or failed (waiting plus in flight). */
  get pending(): number {
    return this.#held;
  }

  get closed(): boolean {
    return this.#closing !== undefined;
  }

  /** Sends what is queued; resolves (never rejects) once every message accepted so far was sent or failed. */
  async flush(): Promise<void> {
    this.#flushNow();
    await Promise.all([...this.#inFlight]);
  }

  /** Refuses further calls (CLIENT_CLOSED), stops the timer and flushes. Safe to call twice. */
  close(): Promise<void> {
    if (!this.#closing) {
      this.#log?.('closing');
      this.#cancelTimer();
      this.#closing = this.flush();
    }
    return this.#closing;
  }

  #enqueue(type: CallType, input: unknown, callback: Callback | undefined): void {
    if (this.#closing) throw new AnalyticsError('CLIENT_CLOSED', `${type} after close(): the client no longer accepts calls`);
    if (callback !== undefined && typeof callback !== 'function') throw new AnalyticsError('INVALID_MESSAGE', `${type}: the callback must be a function`, { field: 'callback' });
    if (this.#held >= this.#options.maxQueueSize) {
      throw new AnalyticsError('QUEUE_FULL', `${type} refused: ${this.#held} messages are already waiting or in flight (maxQueueSize ${this.#options.maxQueueSize})`);
    }
    const built = buildMessage(type, input, { now: this.#options.clock.now(), newMessageId: randomUUID });
    this.#queue.push({ ...built, callback });
    this.#held++;
    this.#log?.(`queued ${type} ${built.message.messageId} (${built.bytes} bytes, ${this.#queue.length} waiting): ${excerpt(built.json)}`);
    if (this.#queue.length >= this.#options.flushAt) this.#flushNow();
    else this.#armTimer();
  }

  // Armed only while messages wait, so an idle client never keeps the process alive.
  #armTimer(): void {
    if (this.#timer) return;
    const { clock, flushAfter } = this.#options;
    const delay = Math.max(0, this.#lastFlushAt + flushAfter - clock.now());
    this.#timer = clock.setTimeout(() => {
      this.#timer = undefined;
      this.#flushNow();
    }, delay);
  }

  #cancelTimer(): void {
    this.#timer?.cancel();
    this.#timer = undefined;
  }

  #flushNow(): void {
    this.#cancelTimer();
    this.#lastFlushAt = this.#options.clock.now();
    if (this.#queue.length === 0) return;
    const entries = this.#queue;
    this.#queue = [];
    const task = this.#send(splitIntoBatches(entries));
    this.#inFlight.add(task);
    void task.finally(() => this.#inFlight.delete(task));
  }

  async #send(batches: Entry[][]): Promise<void> {
    // The caller's call returns before any request starts (and a burst of calls finishes first).
    await new Promise<void>((resolve) => setImmediate(resolve));
    for (const batch of batches) {
      const result = await this.#requests.run(() => sendBatch(batch.map((e) => e.json), this.#sender));
      this.#held -= batch.length;
      if (result.ok) this.#delivered(batch, result.status, result.attempts, result.bytes, result.rejected);
      else this.#failed(result.error, batch);
    }
  }

  #delivered(batch: Entry[], status: number, attempts: number, bytes: number, rejections: { index: number; reason: string; message: string }[]): void {
    const refused = new Map(rejections.map((r) => [r.index, r]));
    const accepted = batch.filter((_, i) => !refused.has(i));
    this.#log?.(`sent ${accepted.length} message(s)${refused.size ? `, ${refused.size} refused by the server` : ''}`);
    for (const e of accepted) notify(() => e.callback?.());
    if (this.listenerCount('sent') > 0) {
      notify(() => this.emit('sent', { messages: accepted.map((e) => e.message), status, attempts, bytes, rejected: refused.size }));
    }
    for (const [index, r] of refused) {
      const entry = batch[index];
      if (!entry) continue;
      const error = new AnalyticsError('MESSAGE_REJECTED', `the server refused ${entry.message.type} ${entry.message.messageId} (${r.reason}): ${r.message}`, { status, attempts });
      this.#failed(error, [entry]);
    }
  }

  #failed(error: AnalyticsError, batch: Entry[]): void {
    this.#log?.(`failed ${batch.length} message(s): ${error.code} ${error.message}`);
    for (const e of batch) notify(() => e.callback?.(error));
    if (this.listenerCount('error') > 0) notify(() => this.emit('error', error, batch.map((e) => e.message)));
  }
}

export function createClient(writeKey: string, options?: AnalyticsOptions): Analytics {
  return new Analytics(writeKey, options);
}

// A throwing callback or listener is the caller's bug: surface it like any Node callback error
// (uncaughtException) instead of breaking the flush that called it.
function notify(fn: () => void): void {
  try {
    fn();
  } catch (err) {
    process.nextTick(() => {
      throw err;
    });
  }
}
