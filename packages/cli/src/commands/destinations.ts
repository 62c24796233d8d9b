// switchyard destinations: list, create, get, update and delete webhooks destinations, with
// their event filter, Standard Webhooks signing, client certificates, retry policy and rate limit.
import { Option } from 'commander';
import type { Destination } from '../admin-client.js';
import { destinationBlock, destinationTable } from '../format.js';
import type { WebhookFlags } from '../webhook-options.js';
import { enabledFrom, enableOptions, filterHelp, filterOf, jsonOptions, retryOf, retryOptions, webhookOptions, webhooks, type FilterFlags, type RetryFlags } from './flags.js';
import { deleted, type ActionContext, type GroupSpec } from './spec.js';

export const destinations: GroupSpec = {
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
        ...retryOptions(),
        new Option('--rate-limit <n>', 'at most n requests a second to it (1 to 10000, over every delivery instance); more waits'),
      ],
      help: filterHelp,
      async run(ctx, _args, opts: WebhookFlags & FilterFlags & RetryFlags & RateLimitFlags & { source: string; name?: string; secret?: string; disabled?: boolean; standardSignatures?: boolean }) {
        const hooks = await webhooks(ctx, opts);
        if (hooks === undefined) return ctx.usage('give at least one --url, or --webhooks-json');
        const filter = await filterOf(ctx, opts);
        const retry = retryOf(ctx, opts);
        const rateLimit = rateLimitOf(ctx, opts);
        const body = await ctx.client().createDestination({
          sourceId: opts.source,
          type: 'webhooks',
          ...(opts.name === undefined ? {} : { name: opts.name }),
          ...(opts.disabled ? { enabled: false } : {}),
          settings: { ...(opts.secret === undefined ? {} : { sharedSecret: opts.secret }), webhooks: hooks },
          ...(filter ? { filter } : {}),
          ...(opts.standardSignatures ? { signing: { standard: true } } : {}),
          ...(retry ? { retry } : {}),
          ...(rateLimit ? { rateLimit } : {}),
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
        ...webhookOptions('webhook URL; repeat for several; replaces the whole list (a URL kept keeps its client certificate)'),
        new Option('--secret <secret>', 'set the shared secret'),
        new Option('--no-secret', 'remove the shared secret'),
        new Option('--no-client-cert', 'remove the client certificate of every --url'),
        ...jsonOptions('filter', 'new event filter'),
        new Option('--no-filter', 'remove the event filter (every call goes through)'),
        new Option('--standard-signatures', 'turn Standard Webhooks signatures on (prints a generated secret once)'),
        new Option('--no-standard-signatures', 'turn them off and drop the secrets'),
        ...retryOptions(),
        new Option('--no-retry', 'drop the destination\'s own retry policy (the deployment\'s applies again)'),
        new Option('--rate-limit <n>', 'at most n requests a second to it (1 to 10000, over every delivery instance)'),
        new Option('--no-rate-limit', 'remove the rate limit'),
      ],
      help: filterHelp,
      async run(ctx, [id = ''], opts: WebhookFlags & FilterFlags & RetryFlags & RateLimitFlags & { name?: string; secret?: string | false; enable?: boolean; disable?: boolean; standardSignatures?: boolean }) {
        const hooks = await webhooks(ctx, opts);
        const filter = await filterOf(ctx, opts);
        const retry = retryOf(ctx, opts);
        const rateLimit = rateLimitOf(ctx, opts);
        const settings = {
          ...(hooks === undefined ? {} : { webhooks: hooks }),
          // --no-secret arrives as false; the API removes the secret on null.
          ...(opts.secret === undefined ? {} : { sharedSecret: opts.secret === false ? null : opts.secret }),
        };
        const enabled = enabledFrom(opts);
        if (opts.name === undefined && enabled === undefined && Object.keys(settings).length === 0 && filter === undefined && opts.standardSignatures === undefined && retry === undefined && rateLimit === undefined) {
          ctx.usage('nothing to update: give --name, --enable/--disable, --url, --webhooks-json, --secret, --no-secret, --filter, --no-filter, --[no-]standard-signatures, --retry-tiers with --retry-deadline, --no-retry, --rate-limit or --no-rate-limit');
        }
        const body = await ctx.client().updateDestination(id, {
          name: opts.name,
          enabled,
          ...(Object.keys(settings).length === 0 ? {} : { settings }),
          ...(filter === undefined ? {} : { filter }),
          ...(opts.standardSignatures === undefined ? {} : { signing: { standard: opts.standardSignatures } }),
          ...(retry === undefined ? {} : { retry }),
          ...(rateLimit === undefined ? {} : { rateLimit }),
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

type RateLimitFlags = { rateLimit?: string | false };

/**
 * The rate limit of --rate-limit n ({perSecond: n}), null for --no-rate-limit, undefined when
 * neither was given. Only the form is checked here (a whole number); the API checks the range.
 */
function rateLimitOf(ctx: ActionContext, opts: RateLimitFlags): { perSecond: number } | null | undefined {
  if (opts.rateLimit === undefined) return undefined;
  if (opts.rateLimit === false) return null;
  // Number('') is 0 and Number('x') NaN, which JSON would send as null: no limit at all.
  if (!/^\d{1,9}$/.test(opts.rateLimit)) return ctx.usage(`--rate-limit takes a whole number of requests a second, got ${JSON.stringify(opts.rateLimit)}`);
  return { perSecond: Number(opts.rateLimit) };
}
