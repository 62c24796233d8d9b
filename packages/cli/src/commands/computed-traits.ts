// switchyard computed-traits: list, create, get and delete computed traits and their definition.
import { Option } from 'commander';
import { computedTraitBlock, computedTraitTable } from '../format.js';
import { jsonObject, jsonOptions } from './flags.js';
import { deleted, type GroupSpec } from './spec.js';

export const computedTraits: GroupSpec = {
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
