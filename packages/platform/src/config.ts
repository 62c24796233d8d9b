import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { DEFAULT_LABEL_BOUND, parseLabelBound, type LabelBound } from './bounded-labels.js';
import { ConfigError } from './errors.js';
import { parseCidrs } from './net/address-policy.js';

/**
 * Environment parsing: each service declares one zod object of the variables it reads, parses it
 * once in its main.ts, and fails fast with every bad variable named. Nothing else reads process.env.
 */
export type Env = Record<string, string | undefined>;

export function loadConfig<S extends z.ZodObject>(schema: S, env: Env = process.env): z.infer<S> {
  const names = Object.keys(schema.shape);
  const { values, problems } = withFileValues(names, env);
  // Empty strings count as unset, so `FOO= npm start` falls back to the default.
  const cleaned = Object.fromEntries(Object.entries(values).filter(([, v]) => v !== undefined && v !== ''));
  const result = schema.safeParse(cleaned);
  if (!result.success) {
    for (const issue of result.error.issues) {
      const name = issue.path.join('.') || '(environment)';
      const value = cleaned[String(issue.path[0])];
      problems.push(`${name}: ${issue.message} (${shown(name, value)})`);
    }
  }
  for (const rule of CROSS_RULES) {
    if (rule.names.every((n) => names.includes(n))) problems.push(...rule.check(cleaned));
  }
  if (problems.length > 0 || !result.success) throw new ConfigError(problems);
  return result.data;
}

/**
 * The `<NAME>_FILE` convention (docs/decisions/0015-kafka-security-variables.md): any variable of
 * the schema may instead name a file holding its value (a mounted secret), read here with one
 * trailing newline trimmed. Setting both, or naming a file that cannot be read, is a problem named
 * after the variable; the file's content is never shown.
 */
function withFileValues(names: readonly string[], env: Env): { values: Env; problems: string[] } {
  const values: Env = { ...env };
  const problems: string[] = [];
  for (const name of names) {
    const file = env[`${name}_FILE`];
    if (file === undefined || file === '') continue;
    if (env[name] !== undefined && env[name] !== '') {
      problems.push(`${name}: set both ${name} and ${name}_FILE; set one of them`);
      continue;
    }
    try {
      values[name] = readFileSync(file, 'utf8').replace(/\r?\n$/, '');
    } catch (err) {
      problems.push(`${name}_FILE: cannot read ${JSON.stringify(file)} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
    }
  }
  return { values, problems };
}

/** How a variable's value is shown in a problem: never the value of one that may be a secret. */
function shown(name: string, value: string | undefined): string {
  if (value === undefined) return 'unset';
  return looksSecret(name) ? 'set' : JSON.stringify(value);
}

function looksSecret(name: string): boolean {
  return /TOKEN|SECRET|PASSWORD|USER_INFO|KEY(?!_FILE$)/i.test(name);
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
  /**
   * How many configuration ids a metric label shows (docs/decisions/0023-bounded-metric-labels.md):
   * `none`, `top:N` (the N most active, the rest in `_other`) or `all`.
   */
  labelBound: () => z.string().default(labelBoundText(DEFAULT_LABEL_BOUND)).transform((s, ctx): LabelBound => {
    const bound = parseLabelBound(s);
    if (!bound) { ctx.addIssue({ code: 'custom', message: 'expected none, all or top:N (N from 1 to 10000)' }); return z.NEVER; }
    return bound;
  }),
  topicPrefix: () => z.string().regex(/^[A-Za-z0-9._-]*$/, 'letters, digits, ".", "_" and "-" only').default('switchyard.'),
};

function labelBoundText(bound: LabelBound): string {
  return bound.mode === 'top' ? `top:${bound.n}` : bound.mode;
}

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

/** A PEM file: read at start-up (a path that cannot be read, or holds no PEM block, is a config problem). */
export interface PemFile { path: string; pem: string }

const pemFile = () => z.string().optional().transform((path, ctx): PemFile | undefined => {
  if (path === undefined) return undefined;
  let pem: string;
  try { pem = readFileSync(path, 'utf8'); } catch (err) {
    ctx.addIssue({ code: 'custom', message: `cannot read the file (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})` });
    return z.NEVER;
  }
  if (!pem.includes('-----BEGIN ')) { ctx.addIssue({ code: 'custom', message: 'the file holds no PEM block (-----BEGIN ...)' }); return z.NEVER; }
  return { path, pem };
});

export const KAFKA_SECURITY_PROTOCOLS = ['PLAINTEXT', 'SSL', 'SASL_PLAINTEXT', 'SASL_SSL'] as const;
export const KAFKA_SASL_MECHANISMS = ['PLAIN', 'SCRAM-SHA-256', 'SCRAM-SHA-512'] as const;

/**
 * How the Kafka clients connect: Kafka's own names (security.protocol, sasl.mechanism), turned into
 * kafkajs options in one place (kafka/security.ts). Secrets may come from files (`<NAME>_FILE`).
 */
export const kafkaSecurityEnv = {
  KAFKA_SECURITY_PROTOCOL: z.enum(KAFKA_SECURITY_PROTOCOLS).default('PLAINTEXT'),
  /** CA certificates (PEM) the brokers' certificates must chain to; unset: Node's default roots. */
  KAFKA_SSL_CA_FILE: pemFile(),
  /** The client certificate and its key (PEM) for mutual TLS. */
  KAFKA_SSL_CERT_FILE: pemFile(),
  KAFKA_SSL_KEY_FILE: pemFile(),
  KAFKA_SSL_KEY_PASSWORD: z.string().optional(),
  KAFKA_SASL_MECHANISM: z.enum(KAFKA_SASL_MECHANISMS).optional(),
  KAFKA_SASL_USERNAME: z.string().optional(),
  KAFKA_SASL_PASSWORD: z.string().optional(),
};

/** How the schema registry is reached beyond its URL: Confluent's basic.auth.user.info, and a CA for https. */
export const registryEnv = {
  SCHEMA_REGISTRY_URL: env.url('http://127.0.0.1:8085/apis/ccompat/v7'),
  /** `username:password` (Confluent's basic.auth.user.info). */
  SCHEMA_REGISTRY_BASIC_AUTH_USER_INFO: z.string().optional().transform((text, ctx) => {
    if (text === undefined) return undefined;
    const colon = text.indexOf(':');
    if (colon <= 0) { ctx.addIssue({ code: 'custom', message: 'expected username:password' }); return z.NEVER; }
    return { username: text.slice(0, colon), password: text.slice(colon + 1) };
  }),
  SCHEMA_REGISTRY_SSL_CA_FILE: pemFile(),
};

/** Variables every service reads: where Kafka and the registry are and how to reach them, naming, logging. */
export const commonEnv = {
  KAFKA_BROKERS: env.brokers(),
  ...kafkaSecurityEnv,
  ...registryEnv,
  SWITCHYARD_TOPIC_PREFIX: env.topicPrefix(),
  LOG_LEVEL: env.logLevel(),
  HOST: env.host(),
};

/**
 * Rules across variables, checked by loadConfig for every schema that has all the variables a rule
 * names, on the raw values (so they are reported together with the other problems).
 */
const CROSS_RULES: Array<{ names: string[]; check: (values: Record<string, string | undefined>) => string[] }> = [
  {
    names: Object.keys(kafkaSecurityEnv),
    check: (v) => {
      const protocol = v.KAFKA_SECURITY_PROTOCOL ?? 'PLAINTEXT';
      const sasl = protocol === 'SASL_PLAINTEXT' || protocol === 'SASL_SSL';
      const tls = protocol === 'SSL' || protocol === 'SASL_SSL';
      const problems: string[] = [];
      for (const name of ['KAFKA_SASL_MECHANISM', 'KAFKA_SASL_USERNAME', 'KAFKA_SASL_PASSWORD']) {
        if (sasl && v[name] === undefined) problems.push(`${name}: required when KAFKA_SECURITY_PROTOCOL is ${protocol} (unset)`);
        if (!sasl && v[name] !== undefined) problems.push(`${name}: set, but KAFKA_SECURITY_PROTOCOL is ${protocol}; SASL needs SASL_PLAINTEXT or SASL_SSL`);
      }
      for (const name of ['KAFKA_SSL_CA_FILE', 'KAFKA_SSL_CERT_FILE', 'KAFKA_SSL_KEY_FILE', 'KAFKA_SSL_KEY_PASSWORD']) {
        if (!tls && v[name] !== undefined) problems.push(`${name}: set, but KAFKA_SECURITY_PROTOCOL is ${protocol}; TLS needs SSL or SASL_SSL`);
      }
      if (v.KAFKA_SSL_CERT_FILE !== undefined && v.KAFKA_SSL_KEY_FILE === undefined) problems.push('KAFKA_SSL_KEY_FILE: required with KAFKA_SSL_CERT_FILE (the client certificate\'s key) (unset)');
      if (v.KAFKA_SSL_KEY_FILE !== undefined && v.KAFKA_SSL_CERT_FILE === undefined) problems.push('KAFKA_SSL_CERT_FILE: required with KAFKA_SSL_KEY_FILE (the client certificate) (unset)');
      if (v.KAFKA_SSL_KEY_PASSWORD !== undefined && v.KAFKA_SSL_KEY_FILE === undefined) problems.push('KAFKA_SSL_KEY_PASSWORD: set, but KAFKA_SSL_KEY_FILE is not');
      return problems;
    },
  },
  {
    names: ['SCHEMA_REGISTRY_URL', 'SCHEMA_REGISTRY_SSL_CA_FILE'],
    check: (v) => v.SCHEMA_REGISTRY_SSL_CA_FILE !== undefined && !/^https:/i.test(v.SCHEMA_REGISTRY_URL ?? '')
      ? ['SCHEMA_REGISTRY_SSL_CA_FILE: set, but SCHEMA_REGISTRY_URL is not https']
      : [],
  },
];

/** What commonEnv yields: the settings the shared Kafka and registry clients are built from. */
export type CommonConfig = z.infer<z.ZodObject<typeof commonEnv>>;
export type KafkaSecurityConfig = z.infer<z.ZodObject<typeof kafkaSecurityEnv>>;
export type RegistryConfig = z.infer<z.ZodObject<typeof registryEnv>>;

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
