/**
 * One HTTP attempt → what happens to the task next (docs/decisions/0005-delivery-outcomes.md).
 * Pure: the attempt's facts (status, error kind, Retry-After) come in, a verdict goes out; the code
 * that POSTs and the code that produces to retry or dead-letter topics act on it.
 */

/** What one POST to one URL produced: a response of any status, or no response at all. */
export type AttemptResult =
  | { kind: 'response'; status: number; bodyExcerpt: string; retryAfterMs?: number }
  | { kind: 'error'; error: AttemptError; message: string };

export type AttemptError = 'timeout' | 'connect' | 'reset' | 'tls' | 'blocked_address' | 'dns' | 'invalid_url' | 'other';

/** Why a task went to the dead-letter topic; stored as `reason` in the DeadLetter record. */
export const DEAD_LETTER_REASONS = [
  'permanent_status', 'redirect', 'tls', 'blocked_address', 'invalid_url', 'deadline',
  'destination_removed', 'destination_disabled', 'dns',
] as const;
export type DeadLetterReason = (typeof DEAD_LETTER_REASONS)[number];

export type Outcome =
  | { verdict: 'accepted' }
  | { verdict: 'retry'; reason: string; retryAfterMs?: number }
  | { verdict: 'permanent'; reason: DeadLetterReason };

/** Errors where trying again later cannot help: the same request would fail the same way. */
const PERMANENT_ERRORS: Partial<Record<AttemptError, DeadLetterReason>> = {
  // A certificate that does not verify (self-signed included) is refused and not retried.
  tls: 'tls',
  // Refused by our own address policy (docs/decisions/0008-webhook-security.md); only an operator
  // change can fix it.
  blocked_address: 'blocked_address',
  invalid_url: 'invalid_url',
};

export function classifyAttempt(r: AttemptResult): Outcome {
  if (r.kind === 'error') {
    const permanent = PERMANENT_ERRORS[r.error];
    // timeout, connect, reset, other — and dns: a name that does not resolve may be a transient
    // resolver failure or a record not yet published, so it gets the retry window too.
    return permanent ? { verdict: 'permanent', reason: permanent } : { verdict: 'retry', reason: r.error };
  }
  const { status } = r;
  if (status >= 200 && status <= 299) return { verdict: 'accepted' };
  // Redirects are not followed: following one would POST signed data to a URL nobody configured.
  if (status >= 300 && status <= 399) return { verdict: 'permanent', reason: 'redirect' };
  // 408 and 429 say "not now", not "never".
  if (status >= 400 && status <= 499 && status !== 408 && status !== 429) return { verdict: 'permanent', reason: 'permanent_status' };
  // 5xx, 408, 429, and anything outside the known classes (1xx as a final status, 6xx, garbage):
  // a receiver that answers oddly may be mid-deploy, and the 4-hour deadline bounds the cost.
  const retry: Outcome = { verdict: 'retry', reason: `status_${status}` };
  return r.retryAfterMs === undefined ? retry : { ...retry, retryAfterMs: r.retryAfterMs };
}

const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];
const MONTH = '(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)';
const TIME = '(\\d{2}):(\\d{2}):(\\d{2})';
// The three forms RFC 9110 §5.6.7 makes recipients accept. Date.parse is not used: it accepts
// almost anything ("5", "Wed, 21 Oct 2015 07:28:00 GMT junk") and invents a date for it.
const IMF_FIXDATE = new RegExp(`^(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun), (\\d{2}) ${MONTH} (\\d{4}) ${TIME} GMT$`, 'i');
const RFC850_DATE = new RegExp(`^(?:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday), (\\d{2})-${MONTH}-(\\d{2}) ${TIME} GMT$`, 'i');
const ASCTIME_DATE = new RegExp(`^(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) ${MONTH} ([ \\d]\\d) ${TIME} (\\d{4})$`, 'i');

function utc(year: number, month: string, day: string, h: string, m: string, s: string): number | undefined {
  const mon = MONTHS.indexOf(month.toLowerCase());
  const ms = Date.UTC(year, mon, Number(day), Number(h), Number(m), Number(s));
  const d = new Date(ms);
  // Date.UTC rolls 31 Feb over into March; a date that does not round-trip is invalid.
  const exact = d.getUTCFullYear() === year && d.getUTCMonth() === mon && d.getUTCDate() === Number(day)
    && d.getUTCHours() === Number(h) && d.getUTCMinutes() === Number(m) && d.getUTCSeconds() === Number(s);
  return exact ? ms : undefined;
}

function parseHttpDate(text: string, now: number): number | undefined {
  let m = IMF_FIXDATE.exec(text);
  if (m) return utc(Number(m[3]), m[2]!, m[1]!, m[4]!, m[5]!, m[6]!);
  m = RFC850_DATE.exec(text);
  if (m) {
    // Two-digit years: one more than 50 years ahead is read as the previous century (RFC 9110).
    let year = 2000 + Number(m[3]);
    if (year > new Date(now).getUTCFullYear() + 50) year -= 100;
    return utc(year, m[2]!, m[1]!, m[4]!, m[5]!, m[6]!);
  }
  m = ASCTIME_DATE.exec(text);
  if (m) return utc(Number(m[6]), m[1]!, m[2]!.trim(), m[3]!, m[4]!, m[5]!);
  return undefined;
}

/**
 * A Retry-After header → milliseconds to wait from `now`: delta-seconds or an HTTP-date.
 * Absent, malformed, or a date already past → undefined (the retry tier's own delay applies).
 */
export function parseRetryAfter(header: string | undefined, now: number): number | undefined {
  if (header === undefined) return undefined;
  const text = header.trim();
  if (/^\d+$/.test(text)) {
    const ms = Number(text) * 1000;
    return Number.isFinite(ms) ? ms : undefined;
  }
  const at = parseHttpDate(text, now);
  if (at === undefined || at < now) return undefined;
  return at - now;
}
