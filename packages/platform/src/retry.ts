/**
 * Runs `fn` up to `attempts` times while `retriable(err)` says another try can help, waiting
 * `delayMs × attempt` between tries; the last error, or one that is not retriable, is thrown.
 * For start-up steps that race with other processes on a fresh broker or registry.
 */
export async function withRetries<T>(fn: () => Promise<T>, opts: { attempts: number; delayMs: number; retriable: (err: unknown) => boolean; onRetry?: (err: unknown, attempt: number) => void }): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await fn();
    } catch (err) {
      if (attempt >= opts.attempts || !opts.retriable(err)) throw err;
      opts.onRetry?.(err, attempt);
      await new Promise((r) => setTimeout(r, opts.delayMs * attempt));
    }
  }
}
