// Parses the --since flag: an ISO time, or a duration ("30m", "2d") meaning that long ago.
import { FlagError } from './webhook-options.js';

const UNIT_MS = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 } as const;

/**
 * The ISO time (UTC, with milliseconds, as the API takes it) that `value` names: `<n><unit>`
 * with unit s, m, h, d or w counts back from `now`; anything else must be an ISO date or time
 * (local time when it has no offset).
 */
export function parseSince(value: string, now: Date): string {
  const duration = /^(\d+)([smhdw])$/.exec(value.trim());
  if (duration) {
    const ms = Number(duration[1]) * UNIT_MS[duration[2] as keyof typeof UNIT_MS];
    const at = new Date(now.getTime() - ms);
    if (Number.isNaN(at.getTime())) throw new FlagError(`--since ${value} is too long ago`);
    return at.toISOString();
  }
  // Date.parse alone takes things like "1" or "May 5"; require the ISO shape first. A date alone
  // gets a time of day, so that, like a time without an offset, it is local time (not UTC).
  const iso = /^(\d{4}-\d{2}-\d{2})([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?$/i.exec(value.trim());
  const time = iso === null ? NaN : Date.parse(iso[2] === undefined ? `${iso[1]}T00:00` : iso[0]);
  if (Number.isNaN(time)) {
    throw new FlagError(`--since must be an ISO time (2025-01-02T03:04:05Z) or a duration like 30m, 1h or 2d; got "${value}"`);
  }
  return new Date(time).toISOString();
}
