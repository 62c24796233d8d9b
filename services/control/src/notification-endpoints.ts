import { createHash } from 'node:crypto';
import { z } from 'zod';
import type { Destination } from '@switchyard/platform/config-view/config-state';
import type { DeliveryTask } from '@switchyard/platform/schemas/generated';
import { newSigningSecret, type SigningSecret } from '@switchyard/platform/signing/standard-webhooks';
import type { AddressPolicy } from '@switchyard/platform/net/address-policy';
import { webhookSchema } from './api-schemas.js';

/**
 * Notification endpoints are stored as destinations of type `notifications` with no source
 * (docs/decisions/0019-auto-disable-and-notifications.md): delivery sends their notifications as it
 * sends any task, with the same retries, circuit breakers, SSRF guard and Standard Webhooks
 * signatures, and fan-out never picks them (no source has the empty id).
 */
export const NOTIFICATIONS_TYPE = 'notifications';
export const NOTIFICATION_TYPES = ['destination.disabled', 'destination.failing', 'message.dead_lettered', 'replay.completed'] as const;
export type NotificationType = (typeof NOTIFICATION_TYPES)[number];

export function isNotificationEndpoint(d: Pick<Destination, 'type'>): boolean {
  return d.type === NOTIFICATIONS_TYPE;
}

export function notificationEndpointSchema(policy: AddressPolicy) {
  const url = webhookSchema(policy).shape.url;
  return z.strictObject({
    id: z.string().regex(/^[A-Za-z0-9_.-]{1,64}$/, 'letters, digits, ".", "_" and "-", at most 64').optional(),
    url,
    eventTypes: z.array(z.enum(NOTIFICATION_TYPES, { error: `each event type is one of ${NOTIFICATION_TYPES.join(', ')}` }), { error: 'eventTypes must be a list' })
      .min(1, 'at least one event type is required')
      .transform((types) => [...new Set(types)]),
  });
}

/** A new endpoint, with a new `whsec_` secret (the caller shows its value once) unless `secret` is given (seed files). */
export function newNotificationEndpoint(input: { id: string; url: string; eventTypes: readonly string[]; secret?: string }, now: number): { endpoint: Destination; secret: SigningSecret } {
  const generated = newSigningSecret(now);
  const secret = input.secret === undefined ? generated : { ...generated, secret: input.secret };
  const endpoint: Destination = {
    id: input.id, sourceId: '', name: 'Notifications', type: NOTIFICATIONS_TYPE, enabled: true, sharedSecret: null,
    webhooks: [{ url: input.url, headers: {}, clientCertificate: null }], createdAt: now, updatedAt: now, filter: null,
    standardSignatures: true, signingSecrets: [secret], rateLimit: null, retry: null, disabledReason: null, disabledAt: null, notificationTypes: [...input.eventTypes],
  };
  return { endpoint, secret };
}

export function notificationEndpointView(d: Destination) {
  return {
    id: d.id, url: d.webhooks[0]?.url ?? null, eventTypes: d.notificationTypes, enabled: d.enabled,
    createdAt: new Date(d.createdAt).toISOString(), updatedAt: new Date(d.updatedAt).toISOString(),
  };
}

/** One notification: what every subscribed endpoint receives, signed (Standard Webhooks). */
export interface Notification {
  type: NotificationType;
  /**
   * Stable for the same fact (a destination's failing period, a dead-letter window, a replay), so
   * the `webhook-id` is the same whichever control instance sends it, and receivers dedupe on it.
   */
  key: string;
  at: number;
  data: Record<string, unknown>;
}

/** The JSON body: `{"type", "timestamp", "data"}` (Standard Webhooks' payload structure). */
export function notificationBody(n: Notification): string {
  return JSON.stringify({ type: n.type, timestamp: new Date(n.at).toISOString(), data: n.data });
}

/** The message id of a notification: `msg_` and a digest of its key (the same on every instance). */
export function notificationId(n: Pick<Notification, 'type' | 'key'>): string {
  return `msg_${createHash('sha256').update(`${n.type}\n${n.key}`).digest('base64url').slice(0, 27)}`;
}

/** The delivery tasks of a notification: one per enabled endpoint subscribed to its type. */
export function notificationTasks(n: Notification, endpoints: readonly Destination[]): DeliveryTask[] {
  const messageId = notificationId(n);
  const body = notificationBody(n);
  return endpoints
    .filter((e) => isNotificationEndpoint(e) && e.enabled && e.notificationTypes.includes(n.type))
    .map((e) => ({
      // The task id is the webhook-id delivery signs with: the same notification to the same endpoint.
      taskId: `${messageId}:${e.id}`, messageId, sourceId: '', destinationId: e.id, eventType: n.type, userKey: messageId,
      body, receivedAt: n.at, createdAt: n.at, attempt: 0, firstAttemptAt: null, deadline: null, notBefore: null,
      pendingUrls: null, lastStatus: null, lastError: null,
    }));
}
