// A JSON object given on the command line, inline (--condition <json>) or in a file
// (--condition-file <path>): audience conditions and computed trait definitions. Only the
// JSON syntax and the top-level shape are checked here; the API validates the rest and says
// which field is wrong.
import { readFile } from 'node:fs/promises';
import { FlagError } from './webhook-options.js';

export interface JsonFlags {
  /** The inline JSON text. */
  inline?: string;
  /** A path to a file holding the JSON text. */
  file?: string;
}

/**
 * The object the flags give, or undefined when neither was given. `flag` is the inline flag's
 * name without dashes ('condition'); the file flag is `--<flag>-file`.
 */
export async function jsonObjectFromFlags(flag: string, flags: JsonFlags, read: (path: string) => Promise<string> = readUtf8): Promise<Record<string, unknown> | undefined> {
  if (flags.inline !== undefined && flags.file !== undefined) throw new FlagError(`--${flag} and --${flag}-file: give one or the other`);
  if (flags.inline !== undefined) return parseJsonObject(flags.inline, `--${flag}`);
  if (flags.file === undefined) return undefined;
  let text: string;
  try {
    text = await read(flags.file);
  } catch (err) {
    throw new FlagError(`cannot read --${flag}-file ${flags.file}: ${err instanceof Error ? err.message : String(err)}`);
  }
  return parseJsonObject(text, `--${flag}-file ${flags.file}`);
}

/** Parses text that must be a JSON object; `what` names where it came from in the error. */
export function parseJsonObject(text: string, what: string): Record<string, unknown> {
  let parsed: unknown;
  try {
    // A byte order mark, as some editors save one, is not part of the JSON.
    parsed = JSON.parse(text.replace(/^\uFEFF/, ''));
  } catch (err) {
    throw new FlagError(`${what} is not valid JSON: ${err instanceof Error ? err.message : String(err)}`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new FlagError(`${what} must be a JSON object ({...})`);
  return parsed as Record<string, unknown>;
}

const readUtf8 = (path: string): Promise<string> => readFile(path, 'utf8');
