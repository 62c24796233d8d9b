// Human-readable output: aligned tables for lists, "key: value" blocks for one object.
// Every function returns the whole text, newline-terminated, so callers write it in one go.
import type { Destination, Source } from './admin-client.js';

/** Columns padded to their widest cell and separated by two spaces; the last is not padded. */
export function table(headers: readonly string[], rows: readonly (readonly string[])[]): string {
  const all = [headers, ...rows];
  const widths = headers.map((_, i) => Math.max(...all.map((row) => (row[i] ?? '').length)));
  const line = (row: readonly string[]): string =>
    widths.map((w, i) => (i === widths.length - 1 ? (row[i] ?? '') : (row[i] ?? '').padEnd(w))).join('  ').trimEnd();
  return all.map(line).join('\n') + '\n';
}

/**
 * One field per line with the values aligned; a field with several values continues on
 * indented lines below its label, and one with none shows "(none)".
 */
export function block(fields: readonly (readonly [label: string, value: string | readonly string[]])[]): string {
  const width = Math.max(...fields.map(([label]) => label.length + 1));
  const lines: string[] = [];
  for (const [label, value] of fields) {
    const values = typeof value === 'string' ? [value] : value.length > 0 ? value : ['(none)'];
    values.forEach((v, i) => lines.push(`${(i === 0 ? `${label}:` : '').padEnd(width)} ${v}`.trimEnd()));
  }
  return lines.join('\n') + '\n';
}

const yesNo = (b: boolean): string => (b ? 'yes' : 'no');
const orDash = (s: string | null | undefined): string => (s === null || s === undefined || s === '' ? '-' : s);

export function sourceTable(sources: readonly Source[]): string {
  return table(
    ['ID', 'NAME', 'ENABLED', 'WRITE-KEYS'],
    sources.map((s) => [s.id, s.name, yesNo(s.enabled), String(s.writeKeys.length)]),
  );
}

export function sourceBlock(s: Source): string {
  return block([
    ['id', s.id],
    ['name', s.name],
    ['enabled', yesNo(s.enabled)],
    ['write keys', s.writeKeys],
    ['created', s.createdAt],
    ['updated', s.updatedAt],
  ]);
}

export function destinationTable(destinations: readonly Destination[]): string {
  return table(
    ['ID', 'SOURCE', 'NAME', 'ENABLED', 'URLS'],
    destinations.map((d) => [d.id, d.sourceId, orDash(d.name), yesNo(d.enabled), String(d.settings.webhooks.length)]),
  );
}

export function destinationBlock(d: Destination): string {
  return block([
    ['id', d.id],
    ['source', d.sourceId],
    ['name', orDash(d.name)],
    ['type', d.type],
    ['enabled', yesNo(d.enabled)],
    // Shown as the API gives it: masked when set, so the secret never reaches a terminal.
    ['shared secret', d.settings.sharedSecret ?? '(none)'],
    ['webhooks', d.settings.webhooks.map(webhookLine)],
    ['created', d.createdAt],
    ['updated', d.updatedAt],
  ]);
}

// Header names only: their values are often credentials.
function webhookLine(w: { url: string; headers?: Record<string, string> }): string {
  const names = Object.keys(w.headers ?? {});
  return names.length === 0 ? w.url : `${w.url}  (headers: ${names.join(', ')})`;
}
