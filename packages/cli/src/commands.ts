// The switchyard command tree. Each resource is a group of small leaf specs (usage, options, run);
// buildProgram wires them into commander, so a new resource is one more entry in `groups`.
import { Command, Option, type OptionValues } from 'commander';
import { AdminClient } from './admin-client.js';
import {
  audienceBlock, audienceTable, computedTraitBlock, computedTraitTable, deadLetterBlock, deadLetterTable, deletionLine, destinationBlock,
  destinationTable, replayBlock, replayLine, replayTable, secretTable, sourceBlock, sourceTable,
} from './format.js';
import type { AdminClient as Client, Destination, ReplayStatus } from './admin-client.js';
import { jsonObjectFromFlags, type JsonFlags } from './json-options.js';
import { parseSince } from './since.js';
import { FlagError, webhooksFromFlags, type WebhookFlags } from './webhook-options.js';

export const DEFAULT_ADMIN_URL = 'http://127.0.0.1:8081';

/** What a command prints: the API's JSON body for --json (none after a 204), else readable text. */
export interface Output {
  json: unknown;
  text: string;
  /** Written to stderr after the output, with or without --json. */
  warning?: string;
  /** Exit code when the API call succeeded but the command did not do what was asked. */
  exitCode?: number;
}

/** Thrown after a command has printed its output, to end with a non-zero exit code. */
export class CommandExit extends Error {
  readonly exitCode: number;

  constructor(exitCode: number) {
    super(`exit code ${exitCode}`);
    this.name = 'CommandExit';
    this.exitCode = exitCode;
  }
}

export interface ActionContext {
  /** The API client; reports a usage error when there is no token or the URL is bad. */
  client(): AdminClient;
  /** Reports a usage error (exit code 2); never returns. */
  usage(message: string): never;
  /** The current time, for flags relative to it (--since 1h). */
  now(): Date;
  /** Live progress on stderr (a line redrawn in place), never mixed into the output. */
  progress(line: string): void;
  sleep(ms: number): Promise<void>;
}

export interface LeafSpec {
  /** Name and arguments, as commander takes them: 'update <id>'. */
  usage: string;
  summary: string;
  /** Shown after the options in --help. */
  help?: string;
  /** A factory, so every program gets its own Option objects. */
  options?: () => Option[];
  // A method, so each spec may declare the exact shape of its options. args holds the
  // arguments in order, the values of a variadic last one (<id...>) spread at the end.
  run(ctx: ActionContext, args: string[], opts: OptionValues): Promise<Output>;
}

export interface GroupSpec {
  name: string;
  summary: string;
  commands: readonly LeafSpec[];
}

export interface ProgramIo {
  env: NodeJS.ProcessEnv;
  stdout: (s: string) => void;
  stderr: (s: string) => void;
  fetch: typeof fetch;
  now: () => Date;
  /** For polling commands (replays --watch); tests make it instant. */
  sleep?: (ms: number) => Promise<void>;
}

const enableOptions = (what: string): Option[] => [
  new Option('--enable', `enable the ${what}`).conflicts('disable'),
  new Option('--disable', `disable the ${what}`).conflicts('enable'),
];
const enabledFrom = (opts: { enable?: boolean; disable?: boolean }): boolean | undefined =>
  opts.enable ? true : opts.disable ? false : undefined;
const collect = (value: string, previous: string[] | undefined): string[] => [...(previous ?? []), value];
const deleted = (kind: string, id: string): Output => ({ json: undefined, text: `deleted ${kind} ${id}\n` });

const webhookOptions = (urlHelp: string): Option[] => [
  new Option('--url <url>', urlHelp).argParser(collect),
  new Option('--header <header>', 'header "Name: value" sent to every --url; repeatable').argParser(collect),
  new Option('--webhooks-json <json>', 'the whole webhooks array as JSON, instead of --url/--header'),
];

/** Webhooks from the flags, reporting a bad combination as a usage error. */
function webhooks(ctx: ActionContext, flags: WebhookFlags): ReturnType<typeof webhooksFromFlags> {
  try {
    return webhooksFromFlags(flags);
  } catch (err) {
    if (err instanceof FlagError) return ctx.usage(err.message);
    throw err;
  }
}

/** --<flag> <json> and --<flag>-file <path>, one or the other. */
const jsonOptions = (flag: string, what: string): Option[] => [
  new Option(`--${flag} <json>`, `the ${what} as JSON`).conflicts(`${flag}File`),
  new Option(`--${flag}-file <path>`, `read the ${what} JSON from a file`).conflicts(flag),
];

/** The JSON object of --<flag> or --<flag>-file, required; anything that is not one is a usage error. */
async function jsonObject(ctx: ActionContext, flag: string, flags: JsonFlags): Promise<Record<string, unknown>> {
  let value: Record<string, unknown> | undefined;
  try {
    value = await jsonObjectFromFlags(flag, flags);
  } catch (err) {
    if (err instanceof FlagError) return ctx.usage(err.message);
    throw err;
  }
  return value ?? ctx.usage(`give --${flag} <json> or --${flag}-file <path>`);
}

const filterHelp = [
  '',
  'A filter is JSON: which calls the destination gets (every call when there is none), e.g.',
  '  {"types": ["track", "identify"], "events": ["Order *", "Signed Up"],',
  '   "where": {"or": [{"property": "total", "op": "gt", "value": 50}, {"context": "library.name", "op": "eq", "value": "analytics-go"}]}}',
  '`events` names track calls (* matches any characters); `where` is the audience condition language',
  'over the call\'s properties, traits and context. The API names the field that is wrong.',
].join('\n');

type FilterFlags = { filter?: string | false; filterFile?: string };

/** The filter of --filter / --filter-file, null for --no-filter, undefined when none was given. */
async function filterOf(ctx: ActionContext, opts: FilterFlags): Promise<Record<string, unknown> | null | undefined> {
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

const sources: GroupSpec = {
  name: 'sources',
  summary: 'manage sources (where events come from)',
  commands: [
    {
      usage: 'list',
      summary: 'list sources',
      async run(ctx) {
        const body = await ctx.client().listSources();
        return { json: body, text: sourceTable(body.sources) };
      },
    },
    {
      usage: 'create <name>',
      summary: 'create a source',
      options: () => [new Option('--disabled', 'create it disabled')],
      async run(ctx, [name = ''], opts: { disabled?: boolean }) {
        const body = await ctx.client().createSource({ name, ...(opts.disabled ? { enabled: false } : {}) });
        return { json: body, text: sourceBlock(body) };
      },
    },
    {
      usage: 'get <id>',
      summary: 'show a source',
      async run(ctx, [id = '']) {
        const body = await ctx.client().getSource(id);
        return { json: body, text: sourceBlock(body) };
      },
    },
    {
      usage: 'update <id>',
      summary: 'rename, enable or disable a source',
      options: () => [new Option('--name <name>', 'new name'), ...enableOptions('source')],
      async run(ctx, [id = ''], opts: { name?: string; enable?: boolean; disable?: boolean }) {
        const enabled = enabledFrom(opts);
        if (opts.name === undefined && enabled === undefined) ctx.usage('nothing to update: give --name, --enable or --disable');
        const body = await ctx.client().updateSource(id, { name: opts.name, enabled });
        return { json: body, text: sourceBlock(body) };
      },
    },
    {
      usage: 'delete <id>',
      summary: "delete a source and the source's destinations",
      async run(ctx, [id = '']) {
        await ctx.client().deleteSource(id);
        return deleted('source', id);
      },
    },
  ],
};

const writeKeys: GroupSpec = {
  name: 'write-keys',
  summary: "manage a source's write keys",
  commands: [
    {
      usage: 'add <sourceId>',
      summary: 'create a write key and print it',
      async run(ctx, [sourceId = '']) {
        const body = await ctx.client().addWriteKey(sourceId);
        // Only the key, so scripts can capture it: KEY=$(switchyard write-keys add src_1)
        return { json: body, text: `${body.writeKey}\n` };
      },
    },
    {
      usage: 'remove <sourceId> <key>',
      summary: 'revoke a write key',
      async run(ctx, [sourceId = '', key = '']) {
        const body = await ctx.client().removeWriteKey(sourceId, key);
        return { json: body, text: sourceBlock(body) };
      },
    },
  ],
};

const destinations: GroupSpec = {
  name: 'destinations',
  summary: 'manage destinations (where events go)',
  commands: [
    {
      usage: 'list',
      summary: 'list destinations',
      options: () => [new Option('--source <id>', "only this source's destinations")],
      async run(ctx, _args, opts: { source?: string }) {
        const body = await ctx.client().listDestinations({ sourceId: opts.source });
        return { json: body, text: destinationTable(body.destinations) };
      },
    },
    {
      usage: 'create',
      summary: 'create a webhooks destination',
      options: () => [
        new Option('--source <id>', 'the source it receives events from').makeOptionMandatory(),
        ...webhookOptions('webhook URL; repeat for several'),
        new Option('--secret <secret>', 'shared secret the webhooks are signed with'),
        new Option('--name <name>', 'a name for people'),
        new Option('--disabled', 'create it disabled'),
        ...jsonOptions('filter', 'event filter'),
        new Option('--standard-signatures', 'also sign with Standard Webhooks headers; prints the generated whsec_ secret once'),
      ],
      help: filterHelp,
      async run(ctx, _args, opts: WebhookFlags & FilterFlags & { source: string; name?: string; secret?: string; disabled?: boolean; standardSignatures?: boolean }) {
        const hooks = webhooks(ctx, opts);
        if (hooks === undefined) return ctx.usage('give at least one --url, or --webhooks-json');
        const filter = await filterOf(ctx, opts);
        const body = await ctx.client().createDestination({
          sourceId: opts.source,
          type: 'webhooks',
          ...(opts.name === undefined ? {} : { name: opts.name }),
          ...(opts.disabled ? { enabled: false } : {}),
          settings: { ...(opts.secret === undefined ? {} : { sharedSecret: opts.secret }), webhooks: hooks },
          ...(filter ? { filter } : {}),
          ...(opts.standardSignatures ? { signing: { standard: true } } : {}),
        });
        return { json: body, text: destinationBlock(body) + newSecretText(body) };
      },
    },
    {
      usage: 'get <id>',
      summary: 'show a destination',
      async run(ctx, [id = '']) {
        const body = await ctx.client().getDestination(id);
        return { json: body, text: destinationBlock(body) };
      },
    },
    {
      usage: 'update <id>',
      summary: 'change a destination; what is not given stays as it is',
      options: () => [
        new Option('--name <name>', 'new name'),
        ...enableOptions('destination'),
        ...webhookOptions('webhook URL; repeat for several; replaces the whole list'),
        new Option('--secret <secret>', 'set the shared secret'),
        new Option('--no-secret', 'remove the shared secret'),
        ...jsonOptions('filter', 'new event filter'),
        new Option('--no-filter', 'remove the event filter (every call goes through)'),
        new Option('--standard-signatures', 'turn Standard Webhooks signatures on (prints a generated secret once)'),
        new Option('--no-standard-signatures', 'turn them off and drop the secrets'),
      ],
      help: filterHelp,
      async run(ctx, [id = ''], opts: WebhookFlags & FilterFlags & { name?: string; secret?: string | false; enable?: boolean; disable?: boolean; standardSignatures?: boolean }) {
        const hooks = webhooks(ctx, opts);
        const filter = await filterOf(ctx, opts);
        const settings = {
          ...(hooks === undefined ? {} : { webhooks: hooks }),
          // --no-secret arrives as false; the API removes the secret on null.
          ...(opts.secret === undefined ? {} : { sharedSecret: opts.secret === false ? null : opts.secret }),
        };
        const enabled = enabledFrom(opts);
        if (opts.name === undefined && enabled === undefined && Object.keys(settings).length === 0 && filter === undefined && opts.standardSignatures === undefined) {
          ctx.usage('nothing to update: give --name, --enable/--disable, --url, --webhooks-json, --secret, --no-secret, --filter, --no-filter or --[no-]standard-signatures');
        }
        const body = await ctx.client().updateDestination(id, {
          name: opts.name,
          enabled,
          ...(Object.keys(settings).length === 0 ? {} : { settings }),
          ...(filter === undefined ? {} : { filter }),
          ...(opts.standardSignatures === undefined ? {} : { signing: { standard: opts.standardSignatures } }),
        });
        return { json: body, text: destinationBlock(body) + newSecretText(body) };
      },
    },
    {
      usage: 'delete <id>',
      summary: 'delete a destination',
      async run(ctx, [id = '']) {
        await ctx.client().deleteDestination(id);
        return deleted('destination', id);
      },
    },
  ],
};

/** The secret a create or update generated: printed once, after the destination. */
function newSecretText(d: Destination): string {
  const s = d.signing?.newSecret;
  return s ? `\nnew Standard Webhooks secret ${s.id} (shown only now, keep it safe):\n${s.secret}\n` : '';
}

const signingSecrets: GroupSpec = {
  name: 'signing-secrets',
  summary: "rotate a destination's Standard Webhooks secret",
  commands: [
    {
      usage: 'rotate <destinationId>',
      summary: 'make a new secret and print it (only now); the previous one keeps signing beside it for the grace period',
      options: () => [new Option('--grace-period <duration>', 'how long the previous secret keeps signing: 30m, 24h, 7d, 0s (default 24h, at most 30d)')],
      help: [
        '',
        'Receivers can switch to the new secret at their pace: during the grace period every request',
        'carries a signature with each secret in webhook-signature. Prints only the secret, so scripts',
        'can capture it: SECRET=$(switchyard signing-secrets rotate dst_1)',
      ].join('\n'),
      async run(ctx, [id = ''], opts: { gracePeriod?: string }) {
        if (opts.gracePeriod !== undefined && !/^\d{1,9}[smhd]$/.test(opts.gracePeriod)) ctx.usage(`--grace-period must be a duration such as 24h, 30m, 7d or 0s; got "${opts.gracePeriod}"`);
        const body = await ctx.client().rotateSigningSecret(id, opts.gracePeriod === undefined ? {} : { gracePeriod: opts.gracePeriod });
        return { json: body, text: `${body.signingSecret.secret}\n` };
      },
    },
    {
      usage: 'list <destinationId>',
      summary: 'list the secrets signing now: ids, creation times, and when rotated ones stop',
      async run(ctx, [id = '']) {
        const body = await ctx.client().getDestination(id);
        const secrets = body.signing?.secrets ?? [];
        return { json: { standard: body.signing?.standard ?? false, secrets }, text: secretTable(body.signing?.standard ?? false, secrets) };
      },
    },
  ],
};

/** Polls a replay, redrawing its progress bar on stderr, until it is no longer running. */
async function watchReplay(ctx: ActionContext, client: Client, first: ReplayStatus): Promise<ReplayStatus> {
  let r = first;
  ctx.progress(replayLine(r));
  while (r.state === 'running') {
    await ctx.sleep(1000);
    r = await client.getReplay(r.destinationId, r.id);
    ctx.progress(replayLine(r));
  }
  ctx.progress('');
  return r;
}

/** Done is success; a replay that failed or was cancelled while watched ends the command with 1. */
const replayOutput = (r: ReplayStatus): Output => ({ json: r, text: replayBlock(r), ...(r.state === 'failed' || r.state === 'cancelled' ? { exitCode: 1 } : {}) });

const replays: GroupSpec = {
  name: 'replays',
  summary: 'replay a time range of calls into one destination',
  commands: [
    {
      usage: 'start <destinationId>',
      summary: 'replay the calls received between --from and --to into the destination (with its filter)',
      options: () => [
        new Option('--from <time>', 'start of the range: an ISO time (local without an offset) or a duration ago (2h)').makeOptionMandatory(),
        new Option('--to <time>', 'end of the range (exclusive; default now)'),
        new Option('--rate <n>', 'ingest records read per second at most (default 500)'),
        ...jsonOptions('filter', "replay's own filter, besides the destination's"),
        new Option('--watch', 'show a progress bar until it ends'),
      ],
      help: [
        '',
        'Bodies are the originals (same messageId), so receivers drop what they already have.',
        'Prints the replay; with --watch, a progress bar on stderr, then the final state',
        '(exit code 1 when it failed or was cancelled).',
      ].join('\n'),
      async run(ctx, [id = ''], opts: { from: string; to?: string; rate?: string; filter?: string; filterFile?: string; watch?: boolean }) {
        let from: string;
        let to: string;
        try {
          from = parseSince(opts.from, ctx.now());
          to = opts.to === undefined ? ctx.now().toISOString() : parseSince(opts.to, ctx.now());
        } catch (err) {
          if (err instanceof FlagError) return ctx.usage(err.message);
          throw err;
        }
        if (opts.rate !== undefined && !/^[1-9]\d*$/.test(opts.rate)) ctx.usage(`--rate must be a positive whole number; got "${opts.rate}"`);
        const filter = await filterOf(ctx, opts);
        const client = ctx.client();
        const started = await client.startReplay(id, { from, to, ...(filter ? { filter } : {}), ...(opts.rate === undefined ? {} : { rate: Number(opts.rate) }) });
        return replayOutput(opts.watch ? await watchReplay(ctx, client, started) : started);
      },
    },
    {
      usage: 'status <destinationId> <replayId>',
      summary: "show a replay's state, counts, rate and time left",
      options: () => [new Option('--watch', 'show a progress bar until it ends')],
      async run(ctx, [id = '', rid = ''], opts: { watch?: boolean }) {
        const client = ctx.client();
        const r = await client.getReplay(id, rid);
        return replayOutput(opts.watch ? await watchReplay(ctx, client, r) : r);
      },
    },
    {
      usage: 'list <destinationId>',
      summary: "list a destination's replays, newest first",
      async run(ctx, [id = '']) {
        const body = await ctx.client().listReplays(id);
        return { json: body, text: replayTable(body.replays) };
      },
    },
    {
      usage: 'cancel <destinationId> <replayId>',
      summary: 'stop a running replay (tasks already written are delivered)',
      async run(ctx, [id = '', rid = '']) {
        const r = await ctx.client().cancelReplay(id, rid);
        return { json: r, text: `cancelling replay ${r.id}\n` };
      },
    },
  ],
};

const deadLetters: GroupSpec = {
  name: 'dead-letters',
  summary: 'inspect and replay deliveries that failed for good',
  commands: [
    {
      usage: 'list',
      summary: 'list dead letters, newest first',
      options: () => [
        new Option('--destination <id>', "only this destination's dead letters"),
        new Option('--reason <reason>', 'only dead letters with this reason'),
        new Option('--since <time>', 'only those that failed since an ISO time (local time without an offset) or a duration ago: 30m, 1h, 2d'),
        new Option('--limit <n>', 'at most this many (the API defaults to 100)'),
      ],
      async run(ctx, _args, opts: { destination?: string; reason?: string; since?: string; limit?: string }) {
        let since: string | undefined;
        try {
          since = opts.since === undefined ? undefined : parseSince(opts.since, ctx.now());
        } catch (err) {
          if (err instanceof FlagError) return ctx.usage(err.message);
          throw err;
        }
        if (opts.limit !== undefined && !/^[1-9]\d*$/.test(opts.limit.trim())) ctx.usage(`--limit must be a positive whole number; got "${opts.limit}"`);
        const body = await ctx.client().listDeadLetters({
          destinationId: opts.destination,
          reason: opts.reason,
          since,
          limit: opts.limit === undefined ? undefined : Number(opts.limit),
        });
        return { json: body, text: deadLetterTable(body) };
      },
    },
    {
      usage: 'get <id>',
      summary: 'show a dead letter and the body that was being delivered',
      async run(ctx, [id = '']) {
        const body = await ctx.client().getDeadLetter(id);
        return { json: body, text: deadLetterBlock(body) };
      },
    },
    {
      usage: 'replay <id...>',
      summary: 'deliver dead letters again, as fresh delivery tasks',
      help: [
        '',
        'Prints how many were replayed. Ids that are not dead letters are named on stderr:',
        'the exit code is 0 when at least one was replayed (the others are a warning), and 1',
        'when none was found.',
      ].join('\n'),
      async run(ctx, ids) {
        const body = await ctx.client().replayDeadLetters(ids);
        const missing = body.notFound.join(', ');
        const out: Output = { json: body, text: `replayed ${body.replayed.length}\n` };
        if (body.replayed.length === 0) return { ...out, warning: `error: no such dead letter, nothing replayed: ${missing}\n`, exitCode: 1 };
        if (body.notFound.length > 0) return { ...out, warning: `warning: not found, not replayed: ${missing}\n` };
        return out;
      },
    },
  ],
};

const deletions: GroupSpec = {
  name: 'deletions',
  summary: "request the deletion of a user's data",
  commands: [
    {
      usage: 'request <userId>',
      summary: "send a delete notification for a user through every source's destinations, or --source ones",
      options: () => [new Option('--source <id>', "only this source's destinations; repeatable (default: all sources)").argParser(collect)],
      async run(ctx, [userId = ''], opts: { source?: string[] }) {
        const body = await ctx.client().requestDeletion({ userId, ...(opts.source === undefined ? {} : { sourceIds: opts.source }) });
        return { json: body, text: deletionLine(body) };
      },
    },
  ],
};

const conditionHelp = [
  '',
  'A condition is JSON: a trait comparison, an event count, or and/or/not of conditions, e.g.',
  '  {"trait": "plan", "op": "eq", "value": "pro"}',
  '  {"event": "Order Completed", "within": "30d", "count": {"op": "gte", "value": 3}}',
  '  {"and": [{"trait": "address.country", "op": "eq", "value": "FR"}, {"not": {...}}]}',
  'The API checks it and names the field that is wrong, e.g. condition.and[1].count.value.',
].join('\n');

type ConditionFlags = { condition?: string; conditionFile?: string };
const conditionOf = (ctx: ActionContext, opts: ConditionFlags) => jsonObject(ctx, 'condition', { inline: opts.condition, file: opts.conditionFile });

const audiences: GroupSpec = {
  name: 'audiences',
  summary: 'manage audiences (the users a condition holds for)',
  commands: [
    {
      usage: 'list',
      summary: 'list audiences',
      options: () => [new Option('--source <id>', "only this source's audiences")],
      async run(ctx, _args, opts: { source?: string }) {
        const body = await ctx.client().listAudiences({ sourceId: opts.source });
        return { json: body, text: audienceTable(body.audiences) };
      },
    },
    {
      usage: 'create',
      summary: 'create an audience',
      help: conditionHelp,
      options: () => [
        new Option('--source <id>', 'the source whose users it groups').makeOptionMandatory(),
        new Option('--name <name>', 'its name; the property is its snake_case').makeOptionMandatory(),
        ...jsonOptions('condition', 'condition'),
      ],
      async run(ctx, _args, opts: ConditionFlags & { source: string; name: string }) {
        const condition = await conditionOf(ctx, opts);
        const body = await ctx.client().createAudience({ sourceId: opts.source, name: opts.name, condition });
        return { json: body, text: audienceBlock(body) };
      },
    },
    {
      usage: 'get <id>',
      summary: 'show an audience and its condition',
      async run(ctx, [id = '']) {
        const body = await ctx.client().getAudience(id);
        return { json: body, text: audienceBlock(body) };
      },
    },
    {
      usage: 'update <id>',
      summary: "replace an audience's condition",
      help: conditionHelp,
      options: () => jsonOptions('condition', 'new condition'),
      async run(ctx, [id = ''], opts: ConditionFlags) {
        const condition = await conditionOf(ctx, opts);
        const body = await ctx.client().updateAudience(id, { condition });
        return { json: body, text: audienceBlock(body) };
      },
    },
    {
      usage: 'delete <id>',
      summary: 'delete an audience',
      async run(ctx, [id = '']) {
        await ctx.client().deleteAudience(id);
        return deleted('audience', id);
      },
    },
  ],
};

const computedTraits: GroupSpec = {
  name: 'computed-traits',
  summary: 'manage computed traits (user traits derived from events)',
  commands: [
    {
      usage: 'list',
      summary: 'list computed traits',
      options: () => [new Option('--source <id>', "only this source's computed traits")],
      async run(ctx, _args, opts: { source?: string }) {
        const body = await ctx.client().listComputedTraits({ sourceId: opts.source });
        return { json: body, text: computedTraitTable(body.computedTraits) };
      },
    },
    {
      usage: 'create',
      summary: 'create a computed trait',
      help: [
        '',
        'A definition is JSON with a kind, e.g.',
        '  {"kind": "event_count", "event": "Order Completed", "within": "30d"}',
        '  {"kind": "last_seen", "event": "Order Completed"}',
        '  {"kind": "latest_property", "event": "Plan Changed", "property": "plan"}',
        'The API checks it and names the field that is wrong.',
      ].join('\n'),
      options: () => [
        new Option('--source <id>', 'the source whose events it is computed from').makeOptionMandatory(),
        new Option('--name <name>', 'its name; the trait is its snake_case').makeOptionMandatory(),
        ...jsonOptions('definition', 'definition'),
      ],
      async run(ctx, _args, opts: { source: string; name: string; definition?: string; definitionFile?: string }) {
        const definition = await jsonObject(ctx, 'definition', { inline: opts.definition, file: opts.definitionFile });
        const body = await ctx.client().createComputedTrait({ sourceId: opts.source, name: opts.name, definition });
        return { json: body, text: computedTraitBlock(body) };
      },
    },
    {
      usage: 'get <id>',
      summary: 'show a computed trait and its definition',
      async run(ctx, [id = '']) {
        const body = await ctx.client().getComputedTrait(id);
        return { json: body, text: computedTraitBlock(body) };
      },
    },
    {
      usage: 'delete <id>',
      summary: 'delete a computed trait',
      async run(ctx, [id = '']) {
        await ctx.client().deleteComputedTrait(id);
        return deleted('computed trait', id);
      },
    },
  ],
};

export const groups: readonly GroupSpec[] = [sources, writeKeys, destinations, signingSecrets, replays, deadLetters, deletions, audiences, computedTraits];

/**
 * The commander program for one invocation. It never exits the process: errors are thrown as
 * CommanderError (exitOverride) and all output goes through io.
 */
export function buildProgram(io: ProgramIo): Command {
  const program = new Command('switchyard')
    .description("Client of Switchyard's admin HTTP API.")
    // Set before adding subcommands, which copy these settings from their parent.
    .exitOverride()
    .configureOutput({ writeOut: io.stdout, writeErr: io.stderr })
    .showHelpAfterError('(add --help for usage)')
    // Global options go before the command: `destinations create` has a --url of its own.
    .enablePositionalOptions()
    .option('--url <url>', `admin API base URL (default: $SWITCHYARD_ADMIN_URL, else ${DEFAULT_ADMIN_URL})`)
    .option('--token <token>', 'admin API token (default: $SWITCHYARD_ADMIN_TOKEN)')
    .option('--json', "print the API's JSON response instead of the readable form")
    .addHelpText('after', '\nGlobal options go before the command, e.g. switchyard --url http://admin:8081 sources list.\n--json may also follow the command.');

  for (const group of groups) {
    const groupCommand = program.command(group.name).description(group.summary);
    for (const leaf of group.commands) {
      const command = groupCommand.command(leaf.usage).description(leaf.summary);
      for (const option of leaf.options?.() ?? []) command.addOption(option);
      if (leaf.help !== undefined) command.addHelpText('after', leaf.help);
      command.option('--json', "print the API's JSON response instead of the readable form");
      command.action(async () => {
        const ctx = actionContext(program, command, io);
        // A variadic argument (<id...>) arrives as one array: spread it, so args is flat.
        const args = (command.processedArgs as (string | string[])[]).flat();
        const out = await leaf.run(ctx, args, command.opts());
        const json = program.opts<{ json?: boolean }>().json === true || command.opts<{ json?: boolean }>().json === true;
        if (!json) io.stdout(out.text);
        else if (out.json !== undefined) io.stdout(`${JSON.stringify(out.json, null, 2)}\n`);
        if (out.warning !== undefined) io.stderr(out.warning);
        if (out.exitCode !== undefined && out.exitCode !== 0) throw new CommandExit(out.exitCode);
      });
    }
  }
  return program;
}

function actionContext(program: Command, command: Command, io: ProgramIo): ActionContext {
  const usage = (message: string): never => command.error(`error: ${message}`, { exitCode: 2, code: 'switchyard.usage' });
  return {
    usage,
    now: io.now,
    progress: (line) => io.stderr(`\r${line}\u001b[K`),
    sleep: io.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms))),
    client() {
      const globals = program.opts<{ url?: string; token?: string }>();
      // An empty variable counts as unset, as `export VAR=` usually means "no value".
      const token = globals.token || io.env.SWITCHYARD_ADMIN_TOKEN;
      if (!token) return usage('no admin token: pass --token <token> or set SWITCHYARD_ADMIN_TOKEN');
      const baseUrl = globals.url || io.env.SWITCHYARD_ADMIN_URL || DEFAULT_ADMIN_URL;
      if (!URL.canParse(baseUrl) || !/^https?:$/.test(new URL(baseUrl).protocol)) {
        usage(`admin API URL must be an http(s) URL, got "${baseUrl}"`);
      }
      return new AdminClient({ baseUrl, token, fetch: io.fetch });
    },
  };
}
