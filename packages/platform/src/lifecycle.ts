import type { Logger } from './logger.js';

/**
 * Readiness: a service is ready when every named check it registered reports true (Kafka
 * connected, schemas registered, configuration caught up...). Shutdown flips it to not ready first,
 * so load balancers stop sending before anything closes.
 */
export class Readiness {
  private readonly checks = new Map<string, boolean>();
  private readonly explainers = new Map<string, () => string | undefined>();
  private stopping = false;

  /** `explain` says why a check is false, while it is (e.g. the broker a connect cannot reach). */
  set(name: string, ready: boolean, explain?: () => string | undefined): void {
    this.checks.set(name, ready);
    if (explain) this.explainers.set(name, explain); else this.explainers.delete(name);
  }

  markStopping(): void { this.stopping = true; }

  state(): { ready: boolean; stopping: boolean; checks: Record<string, boolean>; problems?: Record<string, string> } {
    const checks = Object.fromEntries(this.checks);
    const ready = !this.stopping && this.checks.size > 0 && [...this.checks.values()].every(Boolean);
    const problems: Record<string, string> = {};
    for (const [name, explain] of this.explainers) {
      const problem = this.checks.get(name) === false ? explain() : undefined;
      if (problem) problems[name] = problem;
    }
    return { ready, stopping: this.stopping, checks, ...(Object.keys(problems).length > 0 ? { problems } : {}) };
  }
}

type Closer = () => Promise<void> | void;

/**
 * Graceful shutdown in reverse order of start: a service registers a closer for each thing it
 * opens (server, consumer, producer); on SIGTERM/SIGINT they run last-opened first, each bounded by
 * a timeout, and the process exits 0 when all finished (1 if one failed or timed out).
 */
export class Lifecycle {
  /** Set once a shutdown signal arrived: start-up steps still running may then fail harmlessly. */
  static signalled = false;
  private readonly closers: Array<{ name: string; close: Closer }> = [];
  private shuttingDown: Promise<boolean> | undefined;
  readonly readiness = new Readiness();

  constructor(private readonly logger: Logger, private readonly timeoutMs = 25_000) {}

  onShutdown(name: string, close: Closer): void { this.closers.push({ name, close }); }

  /** Installs the signal handlers; call once from main.ts. */
  handleSignals(exit: (code: number) => void = (code) => process.exit(code)): void {
    const onSignal = (signal: NodeJS.Signals) => {
      Lifecycle.signalled = true;
      this.logger.info({ signal }, 'shutting down');
      void this.shutdown().then((ok) => exit(ok ? 0 : 1));
    };
    process.once('SIGTERM', onSignal);
    process.once('SIGINT', onSignal);
  }

  /** Runs every closer once; later calls wait for the same run. Resolves false if one failed. */
  shutdown(): Promise<boolean> {
    this.shuttingDown ??= (async () => {
      let ok = true;
      this.readiness.markStopping();
      for (const { name, close } of [...this.closers].reverse()) {
        try {
          await withTimeout(Promise.resolve().then(close), this.timeoutMs, `closing ${name}`);
          this.logger.debug({ component: name }, 'closed');
        } catch (err) {
          ok = false;
          this.logger.error({ err, component: name }, 'close failed');
        }
      }
      this.logger.info({ ok }, 'stopped');
      return ok;
    })();
    return this.shuttingDown;
  }
}

async function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => { timer = setTimeout(() => reject(new Error(`${what} took longer than ${ms} ms`)), ms); }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}
