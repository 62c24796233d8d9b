import { z } from 'zod';
import { checkRetryPolicy, type RetryPolicyLimits } from '@switchyard/platform/destination-retry';
import { parseDestinationFilter } from '@switchyard/platform/filters/destination-filter';
import type { AddressPolicy } from '@switchyard/platform/net/address-policy';
import type { DestinationRetryPolicy } from '@switchyard/platform/schemas/generated';
import { apiError, type ValidationCode } from './admin-errors.js';
import { clientCertificateProblem, MAX_PEM_CHARS } from './client-certificate.js';

/**
 * Request bodies of the admin API and the rules of the webhooks destination document: 1 to 5
 * webhooks, absolute http(s) URLs, legal HTTP headers, no internal addresses unless allow-listed.
 * Each rule carries a stable error code; `parseBody` turns the first failure into a 400
 * `{code, message, field}`.
 */
export const MAX_WEBHOOKS = 5;
const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
// Visible ASCII, space, tab and obs-text; never CR, LF or NUL (header injection).
const HEADER_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;
/** Headers Switchyard sets itself, or that would break the request framing. */
const RESERVED_HEADERS = new Set([
  'host', 'content-length', 'content-type', 'transfer-encoding', 'connection', 'keep-alive', 'upgrade', 'te', 'trailer', 'user-agent', 'x-signature', 'proxy-authorization',
  'webhook-id', 'webhook-timestamp', 'webhook-signature',
]);

const withCode = (code: ValidationCode) => ({ params: { code } });
const idPattern = /^[A-Za-z0-9_.-]{1,64}$/;

export const sourceCreate = z.strictObject({
  id: z.string().regex(idPattern, 'letters, digits, ".", "_" and "-", at most 64').optional(),
  name: z.string().trim().min(1, 'name is required').max(200),
  enabled: z.boolean().default(true),
});
export const sourcePatch = z.strictObject({
  name: z.string().trim().min(1).max(200).optional(),
  enabled: z.boolean().optional(),
});

/**
 * A webhook's client certificate for mutual TLS (write-only: views show `{"set": true}`). Both
 * PEM texts are parsed and the key matched to the certificate here, so delivery never meets one it
 * cannot load; refusals carry INVALID_CLIENT_CERTIFICATE and the field (`….clientCertificate.key`).
 */
export function clientCertificateSchema(now: () => number = Date.now) {
  const pem = (name: string) => z.string({ error: `${name} is required (PEM text)` }).min(1, `${name} is required (PEM text)`).max(MAX_PEM_CHARS, `${name} is longer than ${MAX_PEM_CHARS} characters`);
  return z.strictObject({ cert: pem('cert'), key: pem('key') }).superRefine((input, ctx) => {
    const problem = clientCertificateProblem(input, now());
    if (problem) ctx.addIssue({ code: 'custom', path: [problem.field], message: problem.message, ...withCode('INVALID_CLIENT_CERTIFICATE') });
  }).meta({ description: 'Mutual TLS: {cert, key} as PEM (unencrypted key, matching the certificate), presented in TLS handshakes with this URL. Write-only: answers show {"set": true}; null removes it; absent on an update keeps the one stored for the same URL' });
}

export function webhookSchema(policy: AddressPolicy, now: () => number = Date.now) {
  return z.strictObject({
    url: z.string({ error: 'url is required' }).max(2048, 'url is longer than 2048 characters').superRefine((text, ctx) => {
      let url: URL;
      try { url = new URL(text); } catch { ctx.addIssue({ code: 'custom', message: `${JSON.stringify(text)} is not an absolute URL`, ...withCode('INVALID_URL') }); return; }
      if (url.protocol !== 'http:' && url.protocol !== 'https:') {
        ctx.addIssue({ code: 'custom', message: `scheme ${url.protocol.replace(':', '')} is not allowed: use http or https`, ...withCode('INVALID_URL_SCHEME') });
        return;
      }
      if (url.username || url.password) {
        ctx.addIssue({ code: 'custom', message: 'credentials in the URL are not allowed (they would travel in logs): send them as a static header', ...withCode('INVALID_URL') });
        return;
      }
      const verdict = policy.checkHost(url.hostname);
      if ('allowed' in verdict && !verdict.allowed) {
        ctx.addIssue({ code: 'custom', message: `host ${url.hostname} is a ${verdict.class} address; add it to SWITCHYARD_ALLOWED_CIDRS to allow it`, ...withCode('BLOCKED_ADDRESS') });
      }
    }),
    headers: z.record(z.string(), z.string()).default({}).superRefine((headers, ctx) => {
      const entries = Object.entries(headers);
      if (entries.length > 20) ctx.addIssue({ code: 'custom', message: 'at most 20 headers per webhook', ...withCode('INVALID_HEADER') });
      for (const [name, value] of entries) {
        if (!HEADER_NAME.test(name)) ctx.addIssue({ code: 'custom', path: [name], message: `${JSON.stringify(name)} is not a legal HTTP header name`, ...withCode('INVALID_HEADER') });
        else if (RESERVED_HEADERS.has(name.toLowerCase())) ctx.addIssue({ code: 'custom', path: [name], message: `header ${name} is set by Switchyard and cannot be configured`, ...withCode('RESERVED_HEADER') });
        else if (!HEADER_VALUE.test(value) || value.length > 4096) ctx.addIssue({ code: 'custom', path: [name], message: `the value of header ${name} contains characters not allowed in HTTP (CR, LF, NUL, controls) or is over 4096 characters`, ...withCode('INVALID_HEADER') });
      }
    }),
    clientCertificate: clientCertificateSchema(now).nullable().optional(),
  });
}

/** `where.and[1].value` → ['where', 'and', 1, 'value'] (zod issue paths, formatted back by parseBody). */
function pathSegments(path: string): PropertyKey[] {
  return [...path.matchAll(/([^.[\]]+)|\[(\d+)\]/g)].map((m) => (m[2] === undefined ? m[1]! : Number(m[2])));
}

/**
 * A destination's event filter (docs/admin-api.md, "Event filters"): checked with the parser fan-out compiles
 * it with, so the API refuses exactly what fan-out could not apply; the refusal names the path
 * (`filter.where.and[1].value`) with code INVALID_FILTER.
 */
export const destinationFilter = z.unknown().superRefine((value, ctx) => {
  if (value === undefined || value === null) return;
  const parsed = parseDestinationFilter(value);
  if (!parsed.ok) ctx.addIssue({ code: 'custom', path: parsed.path ? pathSegments(parsed.path) : [], message: parsed.message, ...withCode('INVALID_FILTER') });
}).meta({
  description: 'Which calls the destination gets (default: all): {types?: [call types], events?: [track event names, * wildcards], where?: condition over properties, traits and context}; null removes it',
  examples: [{ types: ['track', 'identify'], events: ['Order *', 'Signed Up'], where: { property: 'total', op: 'gt', value: 50 } }],
});

/**
 * `signing`: `{"standard": true}` adds the Standard Webhooks headers, signed with a `whsec_` secret
 * generated for it (shown once, in that response); `false` stops them and drops the secrets.
 */
export const destinationSigning = z.strictObject({
  standard: z.boolean({ error: 'signing.standard must be true or false' }),
}).meta({ description: 'Standard Webhooks signatures: {standard: true} generates a whsec_ secret, returned once as signing.newSecret' });

/**
 * `rateLimit`: at most `perSecond` requests a second to the destination over every delivery
 * instance; tasks over it are held, not failed (docs/decisions/0018-destination-rate-limits.md).
 * null removes it.
 */
export const MAX_RATE_PER_SECOND = 10_000;
const RATE_RANGE = `an integer from 1 to ${MAX_RATE_PER_SECOND}`;
export const destinationRateLimit = z.strictObject({
  perSecond: z.number({ error: RATE_RANGE }).int(RATE_RANGE).min(1, RATE_RANGE).max(MAX_RATE_PER_SECOND, RATE_RANGE),
}, { error: 'rateLimit must be {"perSecond": N} or null' }).nullable().meta({
  description: `At most perSecond requests a second (1 to ${MAX_RATE_PER_SECOND}) over every delivery instance; tasks over it wait instead of failing. null removes it`,
  examples: [{ perSecond: 50 }],
});

/** A rotation: how long the previous secret keeps signing beside the new one (`24h` by default, `0s` to stop it at once, at most `30d`). */
export const secretRotation = z.strictObject({
  gracePeriod: z.string().regex(/^\d{1,9}[smhd]$/, 'a duration such as 24h, 30m, 7d or 0s').refine((v) => graceMs(v) <= 30 * 86_400_000, 'at most 30d').optional(),
});

export function graceMs(text: string): number {
  const unit = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }[text.slice(-1) as 's' | 'm' | 'h' | 'd'];
  return Number(text.slice(0, -1)) * unit;
}

/**
 * `retry`: the destination's own retry policy, `{tiers: ["30s", "5m"], deadline: "4h"}`, checked
 * against this deployment's tier topics (destination-retry.ts); null removes it. A refusal names
 * the field (`retry.tiers[1]`) with code INVALID_RETRY_POLICY. Parsed to the stored form (milliseconds).
 */
export function destinationRetry(limits: RetryPolicyLimits) {
  return z.strictObject({
    tiers: z.array(z.string({ error: 'each tier must be a duration string' }), { error: 'retry.tiers must be a list of durations' }),
    deadline: z.string({ error: 'retry.deadline must be a duration string' }),
  }, { error: 'retry must be {tiers, deadline} or null' }).transform((text, ctx): DestinationRetryPolicy => {
    const check = checkRetryPolicy(text, limits);
    if (check.ok) return check.policy;
    ctx.addIssue({ code: 'custom', path: pathSegments(check.field), message: check.message, ...withCode('INVALID_RETRY_POLICY') });
    return z.NEVER;
  }).nullable().meta({
    description: 'The destination\'s own retry policy (default: the deployment\'s SWITCHYARD_RETRY_TIERS and SWITCHYARD_RETRY_DEADLINE): the wait before each retry (the last repeats), each within the deployment\'s shortest and longest tier, and how long after the first attempt to keep trying (1s to 24h); null removes it',
    examples: [{ tiers: ['30s', '5m', '1h'], deadline: '12h' }],
  });
}

export function destinationSchemas(policy: AddressPolicy, retryLimits: RetryPolicyLimits, now: () => number = Date.now) {
  const webhooks = z.array(webhookSchema(policy, now), { error: 'settings.webhooks must be a list' })
    .min(1, 'at least one webhook is required')
    .max(MAX_WEBHOOKS, `at most ${MAX_WEBHOOKS} webhooks per destination`);
  const sharedSecret = z.string().min(1, 'sharedSecret must not be empty; use null to remove it').max(1024).nullable();
  const create = z.strictObject({
    id: z.string().regex(idPattern, 'letters, digits, ".", "_" and "-", at most 64').optional(),
    sourceId: z.string({ error: 'sourceId is required' }).min(1, 'sourceId is required'),
    name: z.string().trim().min(1).max(200).default('Webhooks'),
    type: z.literal('webhooks', { error: 'type must be "webhooks"' }),
    enabled: z.boolean().default(true),
    settings: z.strictObject({ sharedSecret: sharedSecret.optional(), webhooks }, { error: 'settings is required' }),
    filter: destinationFilter.optional(),
    signing: destinationSigning.optional(),
    retry: destinationRetry(retryLimits).optional(),
    rateLimit: destinationRateLimit.optional(),
  });
  const patch = z.strictObject({
    name: z.string().trim().min(1).max(200).optional(),
    enabled: z.boolean().optional(),
    settings: z.strictObject({ sharedSecret: sharedSecret.optional(), webhooks: webhooks.optional() }).optional(),
    filter: destinationFilter.optional(),
    signing: destinationSigning.optional(),
    retry: destinationRetry(retryLimits).optional(),
    rateLimit: destinationRateLimit.optional(),
  });
  return { create, patch };
}

/** Codes for zod's own checks (custom checks carry theirs in params), by `<last path segment>:<zod issue code>`. */
const BUILT_IN_CODES: Readonly<Record<string, ValidationCode>> = {
  'webhooks:too_small': 'NO_WEBHOOKS',
  'webhooks:too_big': 'TOO_MANY_WEBHOOKS',
  'type:invalid_value': 'UNSUPPORTED_TYPE',
};

/** Validates a request body; the first problem becomes a 400 with its field path (e.g. settings.webhooks[0].url). */
export function parseBody<S extends z.ZodType>(schema: S, body: unknown): z.infer<S> {
  const result = schema.safeParse(body ?? {});
  if (result.success) return result.data;
  const issue = result.error.issues[0]!;
  const field = formatPath(issue.path);
  if (issue.code === 'unrecognized_keys' && issue.keys.length) {
    throw apiError('UNKNOWN_FIELD', { names: issue.keys, field: formatPath([...issue.path, issue.keys[0]!]) });
  }
  // Custom checks set their code with withCode, which takes only the catalogue's validation codes.
  const code = (issue as { params?: { code?: ValidationCode } }).params?.code
    ?? BUILT_IN_CODES[`${String(issue.path.at(-1))}:${issue.code}`]
    ?? 'INVALID_FIELD';
  throw apiError(code, { problem: field ? `${field}: ${issue.message}` : issue.message, field: field || undefined });
}

function formatPath(path: readonly PropertyKey[]): string {
  return path.reduce<string>((out, part) => (typeof part === 'number' ? `${out}[${part}]` : out ? `${out}.${String(part)}` : String(part)), '');
}
