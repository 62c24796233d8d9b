// switchyard sources: list, create, get, update and delete sources.
import { Option } from 'commander';
import { sourceBlock, sourceTable } from '../format.js';
import { enabledFrom, enableOptions } from './flags.js';
import { deleted, type GroupSpec } from './spec.js';

export const sources: GroupSpec = {
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
