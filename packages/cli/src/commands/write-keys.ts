// switchyard write-keys: add and revoke a source's write keys.
import { sourceBlock } from '../format.js';
import type { GroupSpec } from './spec.js';

export const writeKeys: GroupSpec = {
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
