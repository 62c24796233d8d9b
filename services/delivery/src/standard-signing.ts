import type { Destination } from '@switchyard/platform/config-view/config-state';
import { secretKey, standardSignature } from '@switchyard/platform/signing/standard-webhooks';

/** What a request needs to carry the Standard Webhooks headers: the message id and the keys that sign now. */
export interface StandardSigning { id: string; keys: readonly Buffer[] }

type Keys = Array<{ key: Buffer; expiresAt: number | null }>;
const decoded = new WeakMap<Destination, Keys>();

/**
 * The Standard Webhooks signing of one attempt of a task, or undefined when the destination does
 * not use it. `webhook-id` is the task id (message + destination): stable across the retries of
 * one call to one destination, different per destination. Keys are decoded once per destination
 * record (a config change replaces the record); which of them sign is decided at each attempt, so
 * a rotated secret stops signing when its grace period ends, without a config change.
 */
export function standardSigning(destination: Destination, taskId: string, now: number): StandardSigning | undefined {
  if (!destination.standardSignatures) return undefined;
  let keys = decoded.get(destination);
  if (!keys) decoded.set(destination, (keys = destination.signingSecrets.map((s) => ({ key: secretKey(s.secret), expiresAt: s.expiresAt }))));
  const active = keys.filter((k) => k.expiresAt === null || k.expiresAt > now).map((k) => k.key);
  return active.length ? { id: taskId, keys: active } : undefined;
}

/** The three headers, the timestamp being this attempt's (Unix seconds), over the exact body bytes. */
export function standardHeaders(signing: StandardSigning, body: Buffer, nowMs: number): Record<string, string> {
  const timestamp = Math.floor(nowMs / 1000);
  return { 'webhook-id': signing.id, 'webhook-timestamp': String(timestamp), 'webhook-signature': standardSignature(signing.keys, signing.id, timestamp, body) };
}
