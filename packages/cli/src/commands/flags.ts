// Options and flag readers that several commands share: --enable/--disable, repeatable flags,
// the webhook flags, --<flag> <json> / --<flag>-file pairs, the event filter and the retry policy. A bad flag is
// reported through ctx.usage, as a usage error.
import { Option } from 'commander';
import { jsonObjectFromFlags, type JsonFlags } from '../json-options.js';
import { clientCertificateFromFlags, FlagError, webhooksFromFlags, type WebhookFlags } from '../webhook-options.js';
import type { ActionContext } from './spec.js';

export const enableOptions = (what: string): Option[] => [
  new Option('--enable', `enable the ${what}`).conflicts('disable'),
  new Option('--disable', `disable the ${what}`).conflicts('enable'),
];
export const enabledFrom = (opts: { enable?: boolean; disable?: boolean }): boolean | undefined =>
  opts.enable ? true : opts.disable ? false : undefined;
export const collect = (value: string, previous: string[] | undefined): string[] => [...(previous ?? []), value];

export const webhookOptions = (urlHelp: string): Option[] => [
  new Option('--url <url>', urlHelp).argParser(collect),
  new Option('--header <header>', 'header "Name: value" sent to every --url; repeatable').argParser(collect),
  new Option('--client-cert <file>', 'PEM client certificate (mutual TLS) presented to every --url; with --client-key'),
  new Option('--client-key <file>', 'PEM private key (unencrypted) of --client-cert'),
  new Option('--webhooks-json <json>', 'the whole webhooks array as JSON, instead of --url/--header'),
];

/** Webhooks from the flags (certificate files read), reporting a bad combination as a usage error. */
export async function webhooks(ctx: ActionContext, flags: WebhookFlags): Promise<ReturnType<typeof webhooksFromFlags>> {
  try {
    return webhooksFromFlags(flags, await clientCertificateFromFlags(flags));
  } catch (err) {
    if (err instanceof FlagError) return ctx.usage(err.message);
    throw err;
  }
}

/** --<flag> <json> and --<flag>-file <path>, one or the other. */
export const jsonOptions = (flag: string, what: string): Option[] => [
  new Option(`--${flag} <json>`, `the ${what} as JSON`).conflicts(`${flag}File`),
  new Option(`--${flag}-file <path>`, `read the ${what} JSON from a file`).conflicts(flag),
];

/** The JSON object of --<flag> or --<flag>-file, required; anything that is not one is a usage error. */
export async function jsonObject(ctx: ActionContext, flag: string, flags: JsonFlags): Promise<Record<string, unknown>> {
  let value: Record<string, unknown> | undefined;
  try {
    value = await jsonObjectFromFlags(flag, flags);
  } catch (err) {
    if (err instanceof FlagError) return ctx.usage(err.message);
    throw err;
  }
  return value ?? ctx.usage(`give --${flag} <json> or --${flag}-file <path>`);
}

export const filterHelp = [
  '',
  'A filter is JSON: which calls the destination gets (every call when there is none), e.g.',
  '  {"types": ["track", "identify"], "events": ["Order *", "Signed Up"],',
  '   "where": {"or": [{"property": "total", "op": "gt", "value": 50}, {"context": "library.name", "op": "eq", "value": "analytics-go"}]}}',
  '`events` names track calls (* matches any characters); `where` is the audience condition language',
  'over the call\'s properties, traits and context. The API names the field that is wrong.',
].join('\n');

export type FilterFlags = { filter?: string | false; filterFile?: string };

/** The filter of --filter / --filter-file, null for --no-filter, undefined when none was given. */
export async function filterOf(ctx: ActionContext, opts: FilterFlags): Promise<Record<string, unknown> | null | undefined> {
  if (opts.filter === false) {
    if (opts.filterFile !== undefined) return ctx.usage('--no-filter and --filter-file: give one or the other');
    return null;
  }
  try {
    return await jsonObjectFromFlags('filter', { inline: opts.filter, file: opts.filterFile });
  } catch (err) {
    if (err instanceof FlagError) return ctx.usage(err.message);
    throw err;
  }
}

export const retryOptions = (): Option[] => [
  new Option('--retry-tiers <durations>', 'the destination\'s own retry waits, comma-separated, e.g. 30s,5m,1h (the last repeats); with --retry-deadline'),
  new Option('--retry-deadline <duration>', 'how long after the first attempt to keep retrying, e.g. 4h (at most 24h); with --retry-tiers'),
];

export type RetryFlags = { retryTiers?: string; retryDeadline?: string; retry?: false };

/**
 * The retry policy of --retry-tiers and --retry-deadline (both or neither), null for --no-retry
 * (the deployment's policy again), undefined when none was given. The API checks the durations
 * and their limits, and names the field that is wrong.
 */
export function retryOf(ctx: ActionContext, opts: RetryFlags): { tiers: string[]; deadline: string } | null | undefined {
  const given = opts.retryTiers !== undefined || opts.retryDeadline !== undefined;
  if (opts.retry === false) return given ? ctx.usage('--no-retry and --retry-tiers/--retry-deadline: give one or the other') : null;
  if (!given) return undefined;
  if (opts.retryTiers === undefined || opts.retryDeadline === undefined) return ctx.usage('give --retry-tiers and --retry-deadline together');
  return { tiers: opts.retryTiers.split(',').map((t) => t.trim()), deadline: opts.retryDeadline.trim() };
}
