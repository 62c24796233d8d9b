import { createHmac, randomBytes } from 'node:crypto';
import type { SigningSecret } from '../schemas/generated.js';

export type { SigningSecret };

/**
 * Standard Webhooks signatures (https://www.standardwebhooks.com): a secret is `whsec_` followed by
 * the base64 of its key bytes; a request carries `webhook-id` (stable across retries of one
 * message), `webhook-timestamp` (Unix seconds of this attempt) and `webhook-signature`: `v1,` +
 * base64 HMAC-SHA256 of `id.timestamp.body` over the exact body bytes, one per secret, separated by
 * spaces, so a receiver holding either the old or the new secret verifies during a rotation.
 */
export const SECRET_PREFIX = 'whsec_';
/** Key bytes of a generated secret (the specification asks for 24 to 64). */
export const SECRET_BYTES = 32;
export const DEFAULT_GRACE_MS = 24 * 3_600_000;
export const MAX_GRACE_MS = 30 * 86_400_000;

export function newSigningSecret(now: number, random: (n: number) => Buffer = randomBytes): SigningSecret {
  return { id: `whs_${random(8).toString('hex')}`, secret: `${SECRET_PREFIX}${random(SECRET_BYTES).toString('base64')}`, createdAt: now, expiresAt: null };
}

/** The secrets that sign at `now`: the current one and those still in a rotation's grace period. */
export function activeSigningSecrets(secrets: readonly SigningSecret[], now: number): SigningSecret[] {
  return secrets.filter((s) => s.expiresAt === null || s.expiresAt > now);
}

/**
 * A rotation: a new current secret; the previous current one keeps signing until `now + graceMs`
 * (0: it stops at once); secrets already in a grace period keep theirs; expired ones are dropped.
 */
export function rotateSigningSecrets(secrets: readonly SigningSecret[], now: number, graceMs: number, random?: (n: number) => Buffer): { secrets: SigningSecret[]; created: SigningSecret } {
  const created = newSigningSecret(now, random);
  const kept = activeSigningSecrets(secrets, now)
    .map((s) => (s.expiresAt === null ? { ...s, expiresAt: now + graceMs } : s))
    .filter((s) => s.expiresAt! > now);
  return { secrets: [...kept, created], created };
}

/** The key bytes of a `whsec_` secret. */
export function secretKey(secret: string): Buffer {
  return Buffer.from(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret, 'base64');
}

/** `webhook-signature`: `v1,<base64>` per key, space-separated. */
export function standardSignature(keys: readonly Buffer[], id: string, timestampSeconds: number, body: Buffer): string {
  const prefix = `${id}.${timestampSeconds}.`;
  return keys.map((key) => `v1,${createHmac('sha256', key).update(prefix).update(body).digest('base64')}`).join(' ');
}
