import { MAX_CALL_TIME, MIN_CALL_TIME } from '@switchyard/platform/calls/call-rules';

/**
 * Lenient timestamp parsing for what analytics clients send: ISO 8601 with `Z`, `+00:00` or the
 * `+0000` form (Go's deprecated client), a space instead of `T`, any number of fraction digits
 * (nanoseconds are truncated to milliseconds), a date alone (midnight UTC), or epoch milliseconds
 * as a number. Returns epoch milliseconds, or undefined when the value is not a usable time.
 */
const ISO = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d+))?)?)?\s*(Z|z|[+-]\d{2}(?::?\d{2})?)?$/;

/** Years outside this range are typos or overflow, not historical imports (shared with fan-out's check of direct records). */
const MIN_MS = MIN_CALL_TIME;
const MAX_MS = MAX_CALL_TIME;

export function parseTimestamp(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isFinite(value) && value >= MIN_MS && value <= MAX_MS ? Math.trunc(value) : undefined;
  if (typeof value !== 'string') return undefined;
  const m = ISO.exec(value.trim());
  if (!m) return undefined;
  const [, y, mo, d, h = '0', mi = '0', s = '0', frac = '', zone] = m;
  const year = Number(y), month = Number(mo), day = Number(d), hour = Number(h), minute = Number(mi), second = Number(s);
  // Date.UTC reads years 0–99 as 1900–1999, so those must stop here rather than at the range check.
  if (year < 1000 || month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 || second > 60) return undefined;
  const ms = Number(frac.slice(0, 3).padEnd(3, '0'));
  let time = Date.UTC(year, month - 1, day, hour, minute, Math.min(second, 59), ms);
  // Date.UTC rolls 31 February over into March; that is not a real date.
  if (new Date(time).getUTCDate() !== day) return undefined;
  if (zone && zone !== 'Z' && zone !== 'z') {
    const sign = zone[0] === '-' ? -1 : 1;
    const digits = zone.slice(1).replace(':', '');
    const offsetMinutes = Number(digits.slice(0, 2)) * 60 + Number(digits.slice(2, 4) || '0');
    if (offsetMinutes > 18 * 60) return undefined;
    time -= sign * offsetMinutes * 60_000;
  }
  return time >= MIN_MS && time <= MAX_MS ? time : undefined;
}
