// switchyard audiences: list, create, get, update and delete audiences and their condition.
import { Option } from 'commander';
import { audienceBlock, audienceTable } from '../format.js';
import { jsonObject, jsonOptions } from './flags.js';
import { deleted, type ActionContext, type GroupSpec } from './spec.js';

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

export const audiences: GroupSpec = {
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
