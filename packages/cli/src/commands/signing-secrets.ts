// switchyard signing-secrets: rotate and list a destination's Standard Webhooks secrets.
import { Option } from 'commander';
import { secretTable } from '../format.js';
import type { GroupSpec } from './spec.js';

export const signingSecrets: GroupSpec = {
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
