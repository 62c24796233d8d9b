// Secrets of a test run: every admin token, write key, shared secret and credential header a test
// creates or receives goes through here, so `npm test` can scan every service log for it at the
// end (tools/stack/test-logs.ts). Services' own secret env vars are registered by spawnService.
import { randomBytes } from 'node:crypto';
import { registerSecret } from '../../tools/stack/test-logs.js';

export { registerSecret };

/** A fresh random secret, registered for the log scan. */
export function newSecret(label: string, prefix = ''): string {
  const value = `${prefix}${randomBytes(18).toString('base64url')}`;
  registerSecret(value, label);
  return value;
}

const secretFields = new Set(['sharedsecret', 'writekey', 'writekeys', 'token', 'admintoken', 'authorization', 'x-api-key', 'password', 'secret']);

/**
 * Registers every value under a secret-named field of an admin API request or response (write
 * keys of a new source, a destination's sharedSecret, an Authorization header of a webhook, a
 * Standard Webhooks signing secret shown once: `signing.newSecret.secret`, `signingSecret.secret`).
 */
export function registerSecretsIn(value: unknown, label = 'admin API', depth = 0): void {
  if (depth > 8 || typeof value !== 'object' || value === null) return;
  for (const [key, child] of Object.entries(value)) {
    if (secretFields.has(key.toLowerCase())) {
      for (const item of Array.isArray(child) ? child : [child]) {
        registerSecret(item, `${key} (${label})`);
        // A Standard Webhooks secret could also leak as its key alone (the base64 after whsec_).
        if (typeof item === 'string' && item.startsWith('whsec_')) registerSecret(item.slice(6), `${key} key (${label})`);
      }
    } else {
      registerSecretsIn(child, label, depth + 1);
    }
  }
}
