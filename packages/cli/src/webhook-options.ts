// Turns the destination command-line flags (--url, --header, --webhooks-json) into the API's
// webhooks array. Errors never quote the input: header values are often credentials.
import type { WebhookInput } from './admin-client.js';

/** A flag combination or value that cannot be sent; the command reports it as a usage error. */
export class FlagError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'FlagError';
  }
}

/** Parses `Name: value` flags into a header record; the value may itself contain colons. */
export function parseHeaders(flags: readonly string[]): Record<string, string> {
  const headers: Record<string, string> = {};
  flags.forEach((flag, i) => {
    const colon = flag.indexOf(':');
    const name = colon < 0 ? '' : flag.slice(0, colon).trim();
    if (name === '' || /\s/.test(name)) throw new FlagError(`--header #${i + 1} must look like "Name: value"`);
    headers[name] = flag.slice(colon + 1).trim();
  });
  return headers;
}

/** Parses --webhooks-json: an array of {url, headers?} with string header values. */
export function parseWebhooksJson(text: string): WebhookInput[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new FlagError('--webhooks-json is not valid JSON');
  }
  if (!Array.isArray(parsed)) throw new FlagError('--webhooks-json must be a JSON array of {"url": ..., "headers": {...}}');
  return parsed.map((item: unknown, i): WebhookInput => {
    if (!isRecord(item) || typeof item.url !== 'string') throw new FlagError(`--webhooks-json[${i}] needs a string "url"`);
    if (item.headers === undefined) return { url: item.url };
    const headers = item.headers;
    if (!isRecord(headers) || !Object.values(headers).every((v) => typeof v === 'string')) {
      throw new FlagError(`--webhooks-json[${i}].headers must be an object of string values`);
    }
    return { url: item.url, headers: headers as Record<string, string> };
  });
}

export interface WebhookFlags {
  url?: string[];
  header?: string[];
  webhooksJson?: string;
}

/**
 * The webhooks the flags describe, or undefined when none were given (an update leaves the
 * list unchanged then). --header applies to every --url.
 */
export function webhooksFromFlags(flags: WebhookFlags): WebhookInput[] | undefined {
  const urls = flags.url ?? [];
  const headerFlags = flags.header ?? [];
  if (flags.webhooksJson !== undefined) {
    if (urls.length > 0 || headerFlags.length > 0) throw new FlagError('--webhooks-json replaces --url and --header: give one or the other');
    return parseWebhooksJson(flags.webhooksJson);
  }
  if (urls.length === 0) {
    if (headerFlags.length > 0) throw new FlagError('--header applies to --url: give at least one --url with it');
    return undefined;
  }
  const headers = parseHeaders(headerFlags);
  // A fresh headers object per webhook, so a later edit of one cannot alias another.
  return urls.map((url) => (headerFlags.length === 0 ? { url } : { url, headers: { ...headers } }));
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
