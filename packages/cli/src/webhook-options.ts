// Turns the destination command-line flags (--url, --header, --client-cert/--client-key,
// --webhooks-json) into the API's webhooks array. Errors never quote the input: header values are
// often credentials, and a client certificate's key always is.
import { readFile } from 'node:fs/promises';
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

/** Parses --webhooks-json: an array of {url, headers?, clientCertificate?} with string header values. */
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
    const certificate = item.clientCertificate;
    // The API checks the PEM; here only the shape, so nothing of it is ever echoed.
    if (certificate !== undefined && certificate !== null && !(isRecord(certificate) && typeof certificate.cert === 'string' && typeof certificate.key === 'string')) {
      throw new FlagError(`--webhooks-json[${i}].clientCertificate must be {"cert": PEM, "key": PEM} or null`);
    }
    const withCertificate = certificate === undefined ? {} : { clientCertificate: certificate === null ? null : { cert: certificate.cert as string, key: certificate.key as string } };
    if (item.headers === undefined) return { url: item.url, ...withCertificate };
    const headers = item.headers;
    if (!isRecord(headers) || !Object.values(headers).every((v) => typeof v === 'string')) {
      throw new FlagError(`--webhooks-json[${i}].headers must be an object of string values`);
    }
    return { url: item.url, headers: headers as Record<string, string>, ...withCertificate };
  });
}

export interface WebhookFlags {
  url?: string[];
  header?: string[];
  webhooksJson?: string;
  /** --client-cert <file>; false for --no-client-cert (update). */
  clientCert?: string | false;
  /** --client-key <file>. */
  clientKey?: string;
}

export type ClientCertificate = { cert: string; key: string };

/**
 * The client certificate of --client-cert and --client-key (read from their files), null for
 * --no-client-cert, undefined when neither was given.
 */
export async function clientCertificateFromFlags(flags: WebhookFlags, read: (path: string) => Promise<string> = readUtf8): Promise<ClientCertificate | null | undefined> {
  if (flags.clientCert === false) {
    if (flags.clientKey !== undefined) throw new FlagError('--no-client-cert and --client-key: give one or the other');
    return null;
  }
  if (flags.clientCert === undefined && flags.clientKey === undefined) return undefined;
  if (flags.clientCert === undefined || flags.clientKey === undefined) throw new FlagError('--client-cert and --client-key go together: give both files');
  const load = async (flag: string, path: string): Promise<string> => {
    try { return await read(path); } catch (err) {
      throw new FlagError(`cannot read ${flag} ${path}: ${err instanceof Error && 'code' in err ? String(err.code) : 'unreadable'}`);
    }
  };
  return { cert: await load('--client-cert', flags.clientCert), key: await load('--client-key', flags.clientKey) };
}

/**
 * The webhooks the flags describe, or undefined when none were given (an update leaves the
 * list unchanged then). --header and the client certificate apply to every --url; left out, the
 * API keeps the certificate it holds for each URL.
 */
export function webhooksFromFlags(flags: WebhookFlags, certificate?: ClientCertificate | null): WebhookInput[] | undefined {
  const urls = flags.url ?? [];
  const headerFlags = flags.header ?? [];
  if (flags.webhooksJson !== undefined) {
    if (urls.length > 0 || headerFlags.length > 0) throw new FlagError('--webhooks-json replaces --url and --header: give one or the other');
    if (certificate !== undefined) throw new FlagError('--webhooks-json replaces the client certificate flags: put "clientCertificate" in its webhooks');
    return parseWebhooksJson(flags.webhooksJson);
  }
  if (urls.length === 0) {
    if (headerFlags.length > 0) throw new FlagError('--header applies to --url: give at least one --url with it');
    if (certificate !== undefined) throw new FlagError('a client certificate belongs to the --url it is for: give at least one --url with it');
    return undefined;
  }
  const headers = parseHeaders(headerFlags);
  // A fresh headers object per webhook, so a later edit of one cannot alias another.
  return urls.map((url) => ({
    url,
    ...(headerFlags.length === 0 ? {} : { headers: { ...headers } }),
    ...(certificate === undefined ? {} : { clientCertificate: certificate }),
  }));
}

const readUtf8 = (path: string): Promise<string> => readFile(path, 'utf8');

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
