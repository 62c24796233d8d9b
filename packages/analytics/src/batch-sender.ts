import { batchBody } from './batch-body.js';
import { sleep, type Clock } from './clock.js';
import { excerpt, type Logger } from './debug-log.js';
import { AnalyticsError } from './errors.js';
import { retryDelay, type AttemptOutcome, type RetryPolicy } from './retry-policy.js';
import { LIBRARY_NAME, LIBRARY_VERSION } from './version.js';

/**
 * Sends one batch: POST {endpoint}/v1/batch, retried per the retry policy. Never throws: the
 * result says what happened, and the client turns it into callbacks and events.
 */
export interface SenderDeps {
  url: string;
  writeKey: string;
  fetch: typeof fetch;
  clock: Clock;
  timeoutMs: number;
  policy: RetryPolicy;
  random?: () => number;
  log: Logger | undefined;
}

/**
 * An event the server refused inside an accepted batch
 * (docs/decisions/0002-tracking-api-limits-and-rejections.md).
 */
export interface ServerRejection {
  index: number;
  reason: string;
  message: string;
}

export type SendResult =
  | { ok: true; status: number; attempts: number; bytes: number; rejected: ServerRejection[] }
  | { ok: false; error: AnalyticsError };

type Attempt = { outcome: AttemptOutcome; text?: string; cause?: unknown };

const USER_AGENT = `${LIBRARY_NAME}/${LIBRARY_VERSION} node/${process.versions.node}`;

export function basicAuth(writeKey: string): string {
  return `Basic ${Buffer.from(`${writeKey}:`, 'utf8').toString('base64')}`;
}

export async function sendBatch(jsons: readonly string[], deps: SenderDeps): Promise<SendResult> {
  const headers = { 'content-type': 'application/json', authorization: basicAuth(deps.writeKey), 'user-agent': USER_AGENT };
  for (let attempt = 1; ; attempt++) {
    const body = batchBody(jsons, new Date(deps.clock.now()));
    const bytes = Buffer.byteLength(body, 'utf8');
    deps.log?.(`sending ${jsons.length} message(s), ${bytes} bytes, to ${deps.url} (attempt ${attempt})`);
    const result = await attemptOnce(body, headers, deps);
    const { outcome } = result;
    if (outcome.kind === 'response') deps.log?.(`received ${outcome.status}: ${excerpt(result.text ?? '')}`);
    else deps.log?.(`${outcome.kind === 'timeout' ? 'timed out' : 'network error'}: ${String(result.cause)}`);

    if (outcome.kind === 'response' && outcome.status >= 200 && outcome.status < 300) {
      return { ok: true, status: outcome.status, attempts: attempt, bytes, rejected: rejectionsIn(result.text) };
    }
    const delay = retryDelay(outcome, attempt - 1, deps.policy, deps.clock.now(), deps.random);
    if (delay === undefined) return { ok: false, error: failure(result, attempt) };
    deps.log?.(`retrying in ${delay} ms`);
    await sleep(deps.clock, delay);
  }
}

async function attemptOnce(body: string, headers: Record<string, string>, deps: SenderDeps): Promise<Attempt> {
  // The clock's timer (not AbortSignal.timeout) so fake-clock tests control timeouts too.
  const controller = new AbortController();
  let timedOut = false;
  const timer = deps.clock.setTimeout(() => {
    timedOut = true;
    controller.abort(new DOMException(`no response within ${deps.timeoutMs} ms`, 'TimeoutError'));
  }, deps.timeoutMs);
  try {
    const res = await deps.fetch(deps.url, { method: 'POST', headers, body, signal: controller.signal });
    // Read the body even on errors: it frees the connection and may explain the failure.
    const text = await res.text();
    return { outcome: { kind: 'response', status: res.status, retryAfter: res.headers.get('retry-after') }, text };
  } catch (cause) {
    return { outcome: { kind: timedOut ? 'timeout' : 'network' }, cause };
  } finally {
    timer.cancel();
  }
}

function failure({ outcome, text, cause }: Attempt, attempts: number): AnalyticsError {
  const tries = attempts === 1 ? '1 attempt' : `${attempts} attempts`;
  switch (outcome.kind) {
    case 'timeout':
      return new AnalyticsError('TIMEOUT', `no response from the server (${tries})`, { cause, attempts });
    case 'network':
      return new AnalyticsError('NETWORK_ERROR', `could not reach the server: ${(cause as Error)?.message ?? String(cause)} (${tries})`, { cause, attempts });
    case 'response': {
      const retriable = outcome.status >= 500 || outcome.status === 429;
      return new AnalyticsError('HTTP_ERROR', `the server answered ${outcome.status}: ${excerpt(text ?? '', 200)} (${tries})`, { status: outcome.status, attempts, retriable });
    }
  }
}

/** `{"success":true,"rejected":[{index,reason,message}]}`; anything unreadable means none. */
function rejectionsIn(text: string | undefined): ServerRejection[] {
  if (!text) return [];
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return [];
  }
  const list = typeof parsed === 'object' && parsed !== null ? (parsed as { rejected?: unknown }).rejected : undefined;
  if (!Array.isArray(list)) return [];
  return list.flatMap((r: unknown) => {
    if (typeof r !== 'object' || r === null) return [];
    const { index, reason, message } = r as Record<string, unknown>;
    if (typeof index !== 'number') return [];
    return [{ index, reason: typeof reason === 'string' ? reason : 'rejected', message: typeof message === 'string' ? message : 'the server refused this message' }];
  });
}
