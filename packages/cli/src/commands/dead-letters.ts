// switchyard dead-letters: list, show and replay deliveries that failed for good.
import { Option } from 'commander';
import { deadLetterBlock, deadLetterTable } from '../format.js';
import { parseSince } from '../since.js';
import { FlagError } from '../webhook-options.js';
import type { GroupSpec, Output } from './spec.js';

export const deadLetters: GroupSpec = {
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
