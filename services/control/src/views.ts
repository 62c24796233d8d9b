import type { Destination, Source } from '@switchyard/platform/config-view/config-state';
import { retryPolicyText } from '@switchyard/platform/destination-retry';
import type { ClientCertificate, Webhook } from '@switchyard/platform/schemas/generated';
import { activeSigningSecrets, newSigningSecret, type SigningSecret } from '@switchyard/platform/signing/standard-webhooks';

/**
 * The API's JSON shapes of stored records: ISO timestamps, the shared secret and client
 * certificates never shown (a webhook's `clientCertificate` is `{"set": true}` or null).
 * `credentials` (admin tokens only: scopes.ts, Access) decides whether write keys and webhook
 * header values are shown; other tokens see each masked, so they can read the configuration
 * without being able to send events or call a receiver as Switchyard does.
 */
export const MASKED_SECRET = '********';

export function sourceView(s: Source, credentials = true) {
  return { id: s.id, name: s.name, enabled: s.enabled, writeKeys: s.writeKeys.map((k) => (credentials ? k : MASKED_SECRET)), createdAt: iso(s.createdAt), updatedAt: iso(s.updatedAt) };
}

/**
 * `now` decides which signing secrets are still listed (a rotated one disappears when its grace
 * period ends). Secret values are never in a view; `newSecret` (see withNewSecret) is the one
 * exception, in the response of the request that made it.
 */
export function destinationView(d: Destination, now = Date.now(), credentials = true) {
  return {
    id: d.id, sourceId: d.sourceId, name: d.name, type: d.type, enabled: d.enabled,
    disabledReason: d.disabledReason, disabledAt: d.disabledAt === null ? null : iso(d.disabledAt),
    settings: { sharedSecret: d.sharedSecret === null ? null : MASKED_SECRET, webhooks: d.webhooks.map((w) => webhookView(w, credentials)) },
    filter: d.filter === null ? null : JSON.parse(d.filter) as unknown,
    signing: {
      standard: d.standardSignatures,
      secrets: activeSigningSecrets(d.signingSecrets, now).map((s) => ({ id: s.id, createdAt: iso(s.createdAt), expiresAt: s.expiresAt === null ? null : iso(s.expiresAt) })),
    },
    retry: d.retry === null ? null : retryPolicyText(d.retry),
    rateLimit: d.rateLimit,
    createdAt: iso(d.createdAt), updatedAt: iso(d.updatedAt),
  };
}

function webhookView(w: Webhook, credentials: boolean) {
  return {
    url: w.url,
    headers: credentials ? { ...w.headers } : Object.fromEntries(Object.keys(w.headers).map((name) => [name, MASKED_SECRET])),
    clientCertificate: w.clientCertificate === null ? null : { set: true as const },
  };
}

/** A webhook as a request gives it: `clientCertificate` absent, null (none) or a new one. */
export interface WebhookInput { url: string; headers: Record<string, string>; clientCertificate?: ClientCertificate | null | undefined }

/**
 * Webhooks as stored after a request. A client certificate is write-only, so a client that sends
 * the webhooks list back cannot include it: left out, it keeps the one stored for the same URL
 * (a certificate belongs to its receiver, so a changed URL starts without one); null removes it.
 */
export function storedWebhooks(input: readonly WebhookInput[], current: readonly Webhook[] = []): Webhook[] {
  const stored = new Map(current.map((w) => [w.url, w.clientCertificate]));
  return input.map(({ url, headers, clientCertificate }) => ({
    url, headers,
    clientCertificate: clientCertificate === undefined ? stored.get(url) ?? null : clientCertificate === null ? null : { cert: clientCertificate.cert, key: clientCertificate.key },
  }));
}

/** A secret's value, shown once: in the response that created it. */
export function secretShownOnce(s: SigningSecret) {
  return { id: s.id, secret: s.secret, createdAt: iso(s.createdAt) };
}

/** The view of a destination whose request generated a secret, with that secret's value. */
export function withNewSecret(view: ReturnType<typeof destinationView>, created: SigningSecret | undefined) {
  return created ? { ...view, signing: { ...view.signing, newSecret: secretShownOnce(created) } } : view;
}

/**
 * The signing fields after a request's `signing`: turning Standard Webhooks on makes a secret
 * when there is no current one; turning it off drops them all. Absent: unchanged.
 */
export function signingAfter(current: Pick<Destination, 'standardSignatures' | 'signingSecrets'>, signing: { standard: boolean } | undefined, now: number): { standardSignatures: boolean; signingSecrets: SigningSecret[]; created?: SigningSecret } {
  if (signing === undefined) return { standardSignatures: current.standardSignatures, signingSecrets: current.signingSecrets };
  if (!signing.standard) return { standardSignatures: false, signingSecrets: [] };
  const active = activeSigningSecrets(current.signingSecrets, now);
  if (active.some((s) => s.expiresAt === null)) return { standardSignatures: true, signingSecrets: active };
  const created = newSigningSecret(now);
  return { standardSignatures: true, signingSecrets: [...active, created], created };
}

/** A validated filter as stored (JSON text); null or absent: no filter. */
export function storedFilter(filter: unknown): string | null {
  return filter === undefined || filter === null ? null : JSON.stringify(filter);
}

function iso(ms: number): string { return new Date(ms).toISOString(); }
