// switchyard tokens: make, list and revoke admin API tokens (scoped, optionally limited to sources).
import { Option } from 'commander';
import { tokenCreatedBlock, tokenTable } from '../format.js';
import { collect } from './flags.js';
import { deleted, type GroupSpec } from './spec.js';

const SCOPES = ['admin', 'read', 'metadata'] as const;
type Scope = (typeof SCOPES)[number];

export const tokens: GroupSpec = {
  name: 'tokens',
  summary: 'manage admin API tokens (admin, read or metadata scope; optionally limited to sources)',
  commands: [
    {
      usage: 'create',
      summary: 'make a token and print it (shown only this once)',
      options: () => [
        new Option('--name <name>', 'what the token is for').makeOptionMandatory(),
        new Option('--scope <scope>', `${SCOPES.join(', ')}; repeatable`).argParser(collect).makeOptionMandatory(),
        new Option('--source <id>', 'limit the token to this source; repeatable (default: every source; not with admin)').argParser(collect),
      ],
      help: '\nScopes: admin may do everything, tokens included; read may call every GET route, payloads included;\nmetadata may call every GET route but sees no event payloads. Only admin tokens may change anything.\n',
      async run(ctx, _args, opts: { name: string; scope: string[]; source?: string[] }) {
        const unknown = opts.scope.find((s) => !(SCOPES as readonly string[]).includes(s));
        if (unknown !== undefined) ctx.usage(`unknown scope "${unknown}": use ${SCOPES.join(', ')}`);
        const body = await ctx.client().createToken({ name: opts.name, scopes: opts.scope as Scope[], ...(opts.source === undefined ? {} : { sourceIds: opts.source }) });
        return { json: body, text: tokenCreatedBlock(body) };
      },
    },
    {
      usage: 'list',
      summary: 'list tokens (never their values)',
      async run(ctx) {
        const body = await ctx.client().listTokens();
        return { json: body, text: tokenTable(body.tokens) };
      },
    },
    {
      usage: 'revoke <id>',
      summary: 'revoke a token: every control instance refuses it within a second or two',
      async run(ctx, [id = '']) {
        await ctx.client().revokeToken(id);
        return { ...deleted('token', id), text: `revoked token ${id}\n` };
      },
    },
  ],
};
