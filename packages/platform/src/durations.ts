/**
 * Durations as operators write them in the admin API: a whole number and one unit (`500ms`, `30s`,
 * `5m`, `4h`). Stricter than the environment's parseDuration (config.ts), which also takes
 * fractions, days and spaces: a stored policy should read back the way it was written.
 */
const UNIT_MS = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000 } as const;
const STRICT = /^(\d{1,9})(ms|s|m|h)$/;

/** Milliseconds, or undefined for anything that is not `<digits><ms|s|m|h>`. */
export function parseStrictDuration(text: string): number | undefined {
  const m = STRICT.exec(text);
  if (!m) return undefined;
  return Number(m[1]) * UNIT_MS[m[2] as keyof typeof UNIT_MS];
}

/** The shortest strict spelling of a whole number of milliseconds: 300000 → "5m", 1500 → "1500ms". */
export function formatDuration(ms: number): string {
  for (const unit of ['h', 'm', 's'] as const) {
    if (ms > 0 && ms % UNIT_MS[unit] === 0) return `${ms / UNIT_MS[unit]}${unit}`;
  }
  return `${ms}ms`;
}
