/**
 * A call's `timestamp` → the string sent, or undefined when it is not a time ingest would take.
 * Ingest reads ISO 8601 only and moves any other call to invalid-events, so the client decides
 * here, at the call: every accepted timestamp leaves as `Date#toISOString()` gives it
 * (`2024-03-07T10:00:00.000Z`), the form the server stores (milliseconds, UTC).
 *
 * - A Date: its instant.
 * - A string in the server's ISO 8601 grammar: the instant the server would read from it, by the
 *   server's rules (offsets such as `+0000`, any number of fraction digits truncated to
 *   milliseconds, no zone meaning UTC, a date alone meaning midnight UTC). A string in that
 *   grammar the server refuses (31 February, hour 25) is refused, not repaired by Date.parse.
 * - Another string with a word in it ('March 7, 2024', 'Thu, 07 Mar 2024 10:00:00 GMT',
 *   `String(date)`): read as `new Date(x)` reads it, local time unless it names a zone.
 *   Strings of digits in another form are refused: '03/07/2024' is March or July, and Date.parse
 *   reads '12' as 1 December 2001.
 * - The year must be 1000–9999, the server's range.
 *
 * The grammar and ranges are copied from services/ingest/src/timestamps.ts (this package imports
 * nothing from the services); message-rules.test.ts holds the server's cases and
 * test/analytics-client.test.ts sends such strings through the real ingest service.
 */
const ISO = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d+))?)?)?\s*(Z|z|[+-]\d{2}(?::?\d{2})?)?$/;
const MIN_MS = Date.UTC(1000, 0, 1);
const MAX_MS = Date.UTC(9999, 11, 31, 23, 59, 59, 999);
/** A month, weekday or zone name: what makes a non-ISO date string unambiguous enough to read. */
const WORD = /[a-z]{3}/i;

export function wireTimestamp(value: unknown): string | undefined {
  let ms: number | undefined;
  if (value instanceof Date) ms = value.getTime();
  else if (typeof value === 'string') {
    const text = value.trim();
    const iso = ISO.exec(text);
    if (iso) ms = isoToMs(iso);
    else if (WORD.test(text)) ms = Date.parse(text);
  }
  return ms !== undefined && ms >= MIN_MS && ms <= MAX_MS ? new Date(ms).toISOString() : undefined;
}

/** The server's reading of a string its grammar matched; undefined for what it refuses. */
function isoToMs(m: RegExpExecArray): number | undefined {
  const [, y, mo, d, h = '0', mi = '0', s = '0', frac = '', zone] = m;
  const year = Number(y), month = Number(mo), day = Number(d), hour = Number(h), minute = Number(mi), second = Number(s);
  if (year < 1000 || month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 || second > 60) return undefined;
  let time = Date.UTC(year, month - 1, day, hour, minute, Math.min(second, 59), Number(frac.slice(0, 3).padEnd(3, '0')));
  if (new Date(time).getUTCDate() !== day) return undefined; // 31 February is not rolled into March
  if (zone && zone !== 'Z' && zone !== 'z') {
    const digits = zone.slice(1).replace(':', '');
    const offsetMinutes = Number(digits.slice(0, 2)) * 60 + Number(digits.slice(2, 4) || '0');
    if (offsetMinutes > 18 * 60) return undefined;
    time -= (zone[0] === '-' ? -1 : 1) * offsetMinutes * 60_000;
  }
  return time;
}
