// switchyard deletions: request the deletion of a user's data.
import { Option } from 'commander';
import { deletionLine } from '../format.js';
import { collect } from './flags.js';
import type { GroupSpec } from './spec.js';

export const deletions: GroupSpec = {
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
