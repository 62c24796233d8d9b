/**
 * DEBUG=analytics logging. The variable is read once, when a client is created, like the Go
 * library; it may be a comma- or space-separated list with `*` wildcards and `-name` exclusions
 * (the `debug` package's syntax), e.g. `DEBUG=foo,analytics` or `DEBUG=*,-express*`.
 */
export const DEBUG_NAMESPACE = 'analytics';

export type Logger = (line: string) => void;

export function debugEnabled(debugValue: string | undefined, namespace = DEBUG_NAMESPACE): boolean {
  if (!debugValue) return false;
  let enabled = false;
  for (const name of debugValue.split(/[\s,]+/).filter(Boolean)) {
    const excluded = name.startsWith('-');
    const pattern = excluded ? name.slice(1) : name;
    if (!globMatches(pattern, namespace)) continue;
    if (excluded) return false;
    enabled = true;
  }
  return enabled;
}

function globMatches(pattern: string, name: string): boolean {
  const source = pattern.split('*').map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('.*');
  return new RegExp(`^${source}$`).test(name);
}

/** The logger the client uses: prefixed lines when enabled, undefined (log nothing) otherwise. */
export function debugLogger(debugValue: string | undefined, logger: Logger): Logger | undefined {
  return debugEnabled(debugValue) ? (line) => logger(`${DEBUG_NAMESPACE}: ${line}`) : undefined;
}

/** Long payloads are cut so one huge message cannot flood the log. */
export function excerpt(text: string, max = 300): string {
  return text.length <= max ? text : `${text.slice(0, max)}… (${text.length} chars)`;
}
