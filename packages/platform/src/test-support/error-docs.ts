import { readFileSync } from 'node:fs';
import type { ErrorCatalogue, ErrorTable } from '../http/error-catalogue.js';

/**
 * The rows of the "Errors" table of a Markdown document (`| \`CODE\` | status | meaning |`), as
 * `CODE status`, sorted: what a catalogue test compares with the catalogue's own rows.
 */
export function documentedErrors(markdownFile: URL): string[] {
  const text = readFileSync(markdownFile, 'utf8');
  const heading = /^#{2,4} Errors$/m.exec(text);
  if (!heading) throw new Error(`${markdownFile.pathname} has no "Errors" heading`);
  const section = text.slice(heading.index + heading[0].length).split(/^#{1,4} /m)[0]!;
  return [...section.matchAll(/^\| `([A-Z0-9_]+)` \| (\d{3}) \|/gm)].map((m) => `${m[1]} ${m[2]}`).sort();
}

/** Each code of the catalogues with its status, as `CODE status`, sorted (a code answered with one status in several catalogues counts once). */
export function catalogueRows(...catalogues: ReadonlyArray<ErrorCatalogue<ErrorTable>>): string[] {
  const rows = catalogues.flatMap((c) => c.codes.map((code) => `${code} ${c.entries[code]!.status}`));
  return [...new Set(rows)].sort();
}
