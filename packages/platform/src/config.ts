import { z } from 'zod';
import { ConfigError } from './errors.js';
import { parseCidrs } from './net/address-policy.js';

/**
 * Environment parsing: each service declares one zod object of the variables it reads, parses it
 * once in its main.ts, and fails fast with every bad variable named. Nothing else reads process.env.
 */
export type Env = Record<string, string | undefined>;

export function loadConfig<S extends z.ZodObject>(schema: S, env: Env = process.env): z.infer<S> {
  // Empty strings count as unset, so `FOO= npm start` falls back to the default.
  const cleaned = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  const result = schema.safeParse(cleaned);
  if (result.success) return result.data;
  const problems = result.error.issues.map((issue) => {
    const name = issue.path.join('.') || '(environment)';
    const value = cleaned[String(issue.path[0])];
    const shown = value === undefined ? 'unset' : looksSecret(name) ? 'set' : JSON.stringify(value);
    return `${name}: ${issue.message} (${shown})`;
  });
  throw new ConfigError(problems);
}

function looksSecret(name: string): boolean {
  return /TOKEN|SECRET|PASSWORD|KEY/i.test(name);
}

/** Building blocks shared by the services' schemas. */
export const env = {
  port: (fallback: number) => z.coerce.number().int().min(0).max(65535).default(fallback),
  host: () => z.string().default('127.0.0.1'),
  /** Comma-separated host:port list. */
  brokers: () =>
    z
      .string()
      .default('127.0.0.1:9092')
      .transform((s) => s.split(',').map((b) => b.trim()).filter(Boolean))
      .refine((list) => list.length > 0 && list.every((b) => /^[^\s:]+:\d+$/.test(b)), 'expected host:port[,host:port...]'),
  url: (fallback: string) => z.url({ protocol: /^https?$/ }).default(fallback),
  logLevel: () => z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  /** A duration such as 500ms, 10s, 1m, 4h; returned in milliseconds. */
  duration: (fallback: string) => z.string().default(fallback).transform((s, ctx) => {
    const ms = parseDuration(s);
    if (ms === undefined) { ctx.addIssue({ code: 'custom', message: 'expected a duration like 500ms, 10s, 1m or 4h' }); return z.NEVER; }
    return ms;
  }),
  /** Comma-separated CIDRs (the SSRF allow-list); a bare address is a /32 or /128. */
  cidrs: () => z.string().default('').transform((text, ctx) => {
    try { return parseCidrs(text); } catch (err) { ctx.addIssue({ code: 'custom', message: (err as Error).message }); return z.NEVER; }
  }),
  /** Whose X-Forwarded-For to believe for the client address (fastify trustProxy): false, true, a hop count, or comma-separated addresses/CIDRs. */
  trustProxy: () => z.string().default('false').transform((v): boolean | number | string[] =>
    v === 'true' ? true : v === 'false' ? false : /^\d+$/.test(v) ? Number(v) : v.split(',').map((s) => s.trim()).filter(Boolean)),
  topicPrefix: () => z.string().regex(/^[A-Za-z0-9._-]*$/, 'letters, digits, ".", "_" and "-" only').default('switchyard.'),
};

const unitMs: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

export function parseDuration(text: string): number | undefined {
  const m = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)\s*$/.exec(text);
  if (!m) return undefined;
  return Math.round(Number(m[1]) * unitMs[m[2]!]!);
}

/** Retry tier delays, e.g. "10s,1m,10m,1h": the last tier repeats until the deadline. */
export const retryTiers = () =>
  z.string().default('10s,1m,10m,1h').transform((s, ctx) => {
    const delays = s.split(',').map((d) => parseDuration(d));
    if (delays.length === 0 || delays.some((d) => d === undefined || d <= 0)) {
      ctx.addIssue({ code: 'custom', message: 'expected comma-separated durations such as 10s,1m,10m,1h' });
      return z.NEVER;
    }
    return delays as number[];
  });

/** Variables every service reads: where Kafka and the registry are, naming, logging. */
export const commonEnv = {
  KAFKA_BROKERS: env.brokers(),
  SCHEMA_REGISTRY_URL: env.url('http://127.0.0.1:8085/apis/ccompat/v7'),
  SWITCHYARD_TOPIC_PREFIX: env.topicPrefix(),
  LOG_LEVEL: env.logLevel(),
  HOST: env.host(),
};

/** Variables that shape the topics (read by the setup step and by the services that use the tiers). */
export const topicEnv = {
  SWITCHYARD_PARTITIONS: z.coerce.number().int().min(1).max(1000).default(6),
  SWITCHYARD_RETRY_TIERS: retryTiers(),
};

/** The retry policy: read by delivery, and by fan-out, which writes the ranges it holds due as delivery would. */
export const retryEnv = {
  SWITCHYARD_RETRY_TIERS: topicEnv.SWITCHYARD_RETRY_TIERS,
  /** How long after its first attempt a task may still be tried. */
  SWITCHYARD_RETRY_DEADLINE: env.duration('4h'),
};
