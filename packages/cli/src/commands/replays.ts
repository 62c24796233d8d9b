// switchyard replays: start, watch, list and cancel replays of a time range into a destination.
import { Option } from 'commander';
import type { AdminClient, ReplayStatus } from '../admin-client.js';
import { replayBlock, replayLine, replayTable } from '../format.js';
import { parseSince } from '../since.js';
import { FlagError } from '../webhook-options.js';
import { filterOf, jsonOptions } from './flags.js';
import type { ActionContext, GroupSpec, Output } from './spec.js';

/** Polls a replay, redrawing its progress bar on stderr, until it is no longer running. */
async function watchReplay(ctx: ActionContext, client: AdminClient, first: ReplayStatus): Promise<ReplayStatus> {
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

export const replays: GroupSpec = {
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
