// switchyard notification-endpoints: create, list, show and delete the endpoints that receive
// Switchyard's own notifications (a destination failing or disabled, dead letters, replays).
import { Option } from 'commander';
import type { NotificationEventType } from '../admin-client.js';
import { notificationEndpointBlock, notificationEndpointCreatedBlock, notificationEndpointTable } from '../format.js';
import { deleted, type ActionContext, type GroupSpec } from './spec.js';

// A record over the API's type, so a new event type there fails to compile here until it is listed.
const EVENT_TYPES = Object.keys({
  'destination.failing': true,
  'destination.disabled': true,
  'message.dead_lettered': true,
  'replay.completed': true,
} satisfies Record<NotificationEventType, true>) as NotificationEventType[];

export const notificationEndpoints: GroupSpec = {
  name: 'notification-endpoints',
  summary: 'manage notification endpoints (where Switchyard reports failing destinations, dead letters, replays)',
  commands: [
    {
      usage: 'create',
      summary: 'create a notification endpoint; prints its whsec_ signing secret once',
      options: () => [
        new Option('--url <url>', 'where notifications are POSTed').makeOptionMandatory(),
        new Option('--event-types <types>', `comma-separated: ${EVENT_TYPES.join(', ')}`).makeOptionMandatory(),
        new Option('--id <id>', 'its id (default: generated)'),
      ],
      help: [
        '',
        'Each notification is a Standard-Webhooks-signed POST of {"type", "timestamp", "data"}, sent with the',
        'retries of any webhook. With several control instances each sends it under the same webhook-id:',
        'receivers dedupe on it. The secret verifying the signatures is printed only now.',
      ].join('\n'),
      async run(ctx, _args, opts: { url: string; eventTypes: string; id?: string }) {
        const eventTypes = eventTypesOf(ctx, opts.eventTypes);
        const body = await ctx.client().createNotificationEndpoint({ ...(opts.id === undefined ? {} : { id: opts.id }), url: opts.url, eventTypes });
        return { json: body, text: notificationEndpointCreatedBlock(body) };
      },
    },
    {
      usage: 'list',
      summary: 'list notification endpoints (never their secrets)',
      async run(ctx) {
        const body = await ctx.client().listNotificationEndpoints();
        return { json: body, text: notificationEndpointTable(body.notificationEndpoints) };
      },
    },
    {
      usage: 'get <id>',
      summary: 'show a notification endpoint',
      async run(ctx, [id = '']) {
        const body = await ctx.client().getNotificationEndpoint(id);
        return { json: body, text: notificationEndpointBlock(body) };
      },
    },
    {
      usage: 'delete <id>',
      summary: 'delete a notification endpoint',
      async run(ctx, [id = '']) {
        await ctx.client().deleteNotificationEndpoint(id);
        return deleted('notification endpoint', id);
      },
    },
  ],
};

/** The event types of --event-types: known ones only, each once, in the order given. */
function eventTypesOf(ctx: ActionContext, flag: string): NotificationEventType[] {
  const given = flag.split(',').map((t) => t.trim()).filter((t) => t !== '');
  if (given.length === 0) return ctx.usage(`--event-types needs at least one of ${EVENT_TYPES.join(', ')}`);
  const unknown = given.find((t) => !(EVENT_TYPES as readonly string[]).includes(t));
  if (unknown !== undefined) return ctx.usage(`unknown event type "${unknown}": use ${EVENT_TYPES.join(', ')}`);
  return [...new Set(given as NotificationEventType[])];
}
