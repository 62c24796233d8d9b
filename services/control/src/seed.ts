import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { parse } from 'yaml';
import { z } from 'zod';
import type { Destination, Source } from '@switchyard/platform/config-view/config-state';
import type { ConfigView } from '@switchyard/platform/config-view/config-view';
import { SECRET_PREFIX, secretKey, type SigningSecret } from '@switchyard/platform/signing/standard-webhooks';
import { parseBody, sourceCreate } from './api-schemas.js';
import { change, type ConfigChange, type ConfigStore } from './config-store.js';
import type { ControlDeps } from './control-deps.js';
import { newWriteKey } from './ids.js';
import { isNotificationEndpoint, newNotificationEndpoint } from './notification-endpoints.js';
import { signingAfter, storedFilter, storedWebhooks } from './views.js';
import { enabledAfterSeed } from './disabled-state.js';

/**
 * A seed file keeps sources and destinations in git (YAML). Applied at start-up, idempotently: an
 * entry that matches what is stored writes nothing; one that differs is overwritten; entries not in
 * the file are left alone. `${NAME}` in any string is replaced by that environment variable (so
 * secrets stay out of git); an unset variable is an error.
 *
 *   sources:
 *     - id: web
 *       name: Website
 *       writeKeys: [${WEB_WRITE_KEY}]
 *   destinations:
 *     - id: web-hooks
 *       sourceId: web
 *       settings:
 *         sharedSecret: ${WEB_HOOK_SECRET}
 *         webhooks:
 *           - url: https://hooks.example.com/switchyard
 *             headers: { X-Team: growth }
 *             clientCertificate: { certFile: tls/client.pem, keyFile: /run/secrets/client.key }
 *       retry: { tiers: [30s, 5m], deadline: 4h }   # optional; absent: the deployment's policy
 *   notificationEndpoints:
 *     - id: ops
 *       url: https://ops.example.com/switchyard
 *       eventTypes: [destination.failing, destination.disabled]
 *       secret: ${OPS_NOTIFY_SECRET}              # optional whsec_ secret; absent: generated once and kept
 *
 * A webhook's `clientCertificate` takes each PEM inline (`cert`, `key`, e.g. `${CLIENT_KEY}`) or
 * from a file (`certFile`, `keyFile`, relative to the seed file's directory): keys usually come
 * mounted as files, and a multi-line PEM is awkward in an environment variable.
 */
export interface SeedResult { written: number; unchanged: number }

/** What applying a seed needs: the current configuration to compare with, and a writer. */
export type SeedDeps = Pick<ControlDeps, 'clock' | 'destinationSchemas' | 'notificationEndpointSchema'> & {
  view: Pick<ConfigView, 'state'>;
  store: Pick<ConfigStore, 'write'>;
};

const seedFile = z.strictObject({
  sources: z.array(z.unknown()).default([]),
  destinations: z.array(z.unknown()).default([]),
  notificationEndpoints: z.array(z.unknown()).default([]),
});
const seedId = z.string().regex(/^[A-Za-z0-9_.-]{1,64}$/);
// The specification's form: whsec_ and the base64 of 24 to 64 key bytes.
const seedSigningSecret = z.string()
  .refine((s) => new RegExp(`^${SECRET_PREFIX}[A-Za-z0-9+/]+={0,2}$`).test(s) && secretKey(s).length >= 24 && secretKey(s).length <= 64,
    `a Standard Webhooks secret: ${SECRET_PREFIX} and the base64 of 24 to 64 bytes`);
const seedSource = sourceCreate.extend({
  id: z.string().regex(/^[A-Za-z0-9_.-]{1,64}$/),
  writeKeys: z.array(z.string().min(8, 'write keys must be at least 8 characters')).min(1).optional(),
});

export function readSeed(path: string, env: NodeJS.ProcessEnv): unknown {
  const text = readFileSync(path, 'utf8');
  return withCertificateFiles(interpolate(parse(text) ?? {}, env, path), dirname(path));
}

/** Replaces `certFile` / `keyFile` of each webhook's clientCertificate by the files' text. */
export function withCertificateFiles(seed: unknown, dir: string, read: (path: string) => string = (p) => readFileSync(p, 'utf8')): unknown {
  const destinations = (seed as { destinations?: unknown } | null)?.destinations;
  if (!Array.isArray(destinations)) return seed;
  const inlined = (certificate: unknown, where: string): unknown => {
    if (!certificate || typeof certificate !== 'object' || Array.isArray(certificate)) return certificate;
    const { certFile, keyFile, ...rest } = certificate as Record<string, unknown>;
    const load = (file: unknown, name: string): string => {
      if (typeof file !== 'string') throw new Error(`seed ${where}.${name}: a file path is required`);
      try { return read(resolve(dir, file)); } catch (err) { throw new Error(`seed ${where}.${name}: cannot read ${file} (${(err as Error).message})`); }
    };
    return {
      ...rest,
      ...(certFile === undefined ? {} : { cert: load(certFile, 'certFile') }),
      ...(keyFile === undefined ? {} : { key: load(keyFile, 'keyFile') }),
    };
  };
  return {
    ...(seed as Record<string, unknown>),
    destinations: destinations.map((entry: unknown, i) => {
      const settings = (entry as { settings?: { webhooks?: unknown } } | null)?.settings;
      if (!settings || !Array.isArray(settings.webhooks)) return entry;
      const webhooks = settings.webhooks.map((w: unknown, j) => (w && typeof w === 'object' && 'clientCertificate' in w
        ? { ...w, clientCertificate: inlined(w.clientCertificate, `destinations[${i}].settings.webhooks[${j}].clientCertificate`) }
        : w));
      return { ...(entry as Record<string, unknown>), settings: { ...settings, webhooks } };
    }),
  };
}

function interpolate(value: unknown, env: NodeJS.ProcessEnv, file: string): unknown {
  if (typeof value === 'string') {
    return value.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (_, name: string) => {
      const v = env[name];
      if (v === undefined) throw new Error(`seed file ${file}: environment variable ${name} is not set`);
      return v;
    });
  }
  if (Array.isArray(value)) return value.map((v) => interpolate(v, env, file));
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, interpolate(v, env, file)]));
  return value;
}

export async function applySeed(seed: unknown, { view, store, clock, destinationSchemas, notificationEndpointSchema }: SeedDeps): Promise<SeedResult> {
  const file = parseEntry(seedFile, seed, 'seed');
  const now = clock();
  const changes: ConfigChange[] = [];
  let unchanged = 0;

  for (const [i, raw] of file.sources.entries()) {
    const entry = parseEntry(seedSource, raw, `sources[${i}]`);
    const current = view.state.source(entry.id);
    const next: Source = {
      id: entry.id, name: entry.name, enabled: entry.enabled,
      writeKeys: entry.writeKeys ?? current?.writeKeys ?? [newWriteKey()],
      createdAt: current?.createdAt ?? now, updatedAt: now,
    };
    if (current && sameExceptTimes(current, next)) unchanged++;
    else changes.push(change.putSource(next));
  }
  const seededSources = new Set(file.sources.map((s) => (s as { id?: string }).id));
  // Both lists are destinations on the config topic: one id in both would have the later entry overwrite the earlier.
  const seededEndpoints = new Set(file.notificationEndpoints.map((e) => (e as { id?: string } | null)?.id));
  for (const [i, raw] of file.destinations.entries()) {
    const entry = parseEntry(destinationSchemas.create.extend({ id: seedId, type: z.literal('webhooks').default('webhooks') }), raw, `destinations[${i}]`);
    if (!seededSources.has(entry.sourceId) && !view.state.source(entry.sourceId)) throw new Error(`seed destinations[${i}]: no source ${entry.sourceId}`);
    const current = view.state.destination(entry.id);
    if (seededEndpoints.has(entry.id) || (current && isNotificationEndpoint(current))) throw new Error(`seed destinations[${i}]: ${entry.id} is a notification endpoint's id`);
    // signing: {standard: true} keeps the stored secrets (rotated through the API), or makes one,
    // whose value is never shown: a rotation (API or CLI) gives one to copy.
    const { created: _created, ...signing } = signingAfter(current ?? { standardSignatures: false, signingSecrets: [] }, entry.signing, now);
    const next: Destination = {
      id: entry.id, sourceId: entry.sourceId, name: entry.name, type: entry.type, ...enabledAfterSeed(current, entry.enabled),
      sharedSecret: entry.settings.sharedSecret ?? null, webhooks: storedWebhooks(entry.settings.webhooks.map((w) => ({ ...w, clientCertificate: w.clientCertificate ?? null }))),
      filter: storedFilter(entry.filter),
      ...signing, notificationTypes: [],
      retry: entry.retry ?? null,
      rateLimit: entry.rateLimit ?? null,
      createdAt: current?.createdAt ?? now, updatedAt: now,
    };
    if (current && sameExceptTimes(current, next)) unchanged++;
    else changes.push(change.putDestination(next));
  }
  const endpointSchema = notificationEndpointSchema.extend({ id: seedId, secret: seedSigningSecret.optional() });
  for (const [i, raw] of file.notificationEndpoints.entries()) {
    const entry = parseEntry(endpointSchema, raw, `notificationEndpoints[${i}]`);
    const current = view.state.destination(entry.id);
    if (current && !isNotificationEndpoint(current)) throw new Error(`seed notificationEndpoints[${i}]: ${entry.id} is a destination's id`);
    const { endpoint } = newNotificationEndpoint(entry, now);
    const next: Destination = { ...endpoint, signingSecrets: endpointSecretsAfterSeed(current?.signingSecrets, endpoint.signingSecrets, entry.secret), createdAt: current?.createdAt ?? now };
    if (current && sameExceptTimes(current, next)) unchanged++;
    else changes.push(change.putDestination(next));
  }
  if (changes.length) await store.write(...changes);
  return { written: changes.length, unchanged };
}

/**
 * A seeded notification endpoint's secrets: the stored ones while the file names no secret (a
 * generated one is kept, never shown again) or names the current one; otherwise the file's secret
 * alone (`fresh`, made with it), replacing the stored ones at once: the file is what receivers hold.
 */
function endpointSecretsAfterSeed(stored: readonly SigningSecret[] | undefined, fresh: SigningSecret[], secret: string | undefined): SigningSecret[] {
  if (stored === undefined || stored.length === 0) return fresh;
  const current = stored.find((s) => s.expiresAt === null);
  return secret === undefined || current?.secret === secret ? [...stored] : fresh;
}

function parseEntry<S extends z.ZodType>(schema: S, value: unknown, where: string): z.infer<S> {
  try {
    return parseBody(schema, value);
  } catch (err) {
    const e = err as { message: string; field?: string };
    throw new Error(`seed ${where}${e.field ? `.${e.field}` : ''}: ${e.message}`);
  }
}

function sameExceptTimes(a: object, b: object): boolean {
  const strip = ({ createdAt: _c, updatedAt: _u, ...rest }: Record<string, unknown>) => rest;
  return stableJson(strip(a as Record<string, unknown>)) === stableJson(strip(b as Record<string, unknown>));
}

function stableJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(stableJson).join(',')}]`;
  if (value && typeof value === 'object') return `{${Object.keys(value).sort().map((k) => `${JSON.stringify(k)}:${stableJson((value as Record<string, unknown>)[k])}`).join(',')}}`;
  return JSON.stringify(value);
}

