// Per-run service logs and the secret scan of `npm test` (docs/decisions/0008-webhook-security.md:
// no log line of any test run may contain a shared secret, a write key or the admin token).
// tools/test.ts creates a log directory and a secrets list for the run and passes both down in the
// environment; spawnService writes each service process's output to its own file there; tests
// register every secret they create or are given (test/support/secrets.ts); at the end
// tools/test.ts scans every log file for every secret.
import { appendFileSync, existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** Environment variables a run passes to the tests (and they to nothing else). */
export const TEST_LOG_DIR = 'TEST_LOG_DIR';
export const TEST_SECRETS_FILE = 'TEST_SECRETS_FILE';

/** Shorter values would match by accident (and no secret the tests make is this short). */
const MIN_SECRET_LENGTH = 12;

/** Environment variables of a service whose values are secrets. */
const SECRET_ENV = /(SECRET|TOKEN|PASSWORD|WRITE_KEY)$/i;

/**
 * Adds a secret to the run's list, with the forms it could leak in: itself and as the base64 of
 * an HTTP Basic header (`key:` and `key`). A no-op outside a run that scans (no TEST_SECRETS_FILE).
 * Appends one short line per form, which concurrent test processes can do safely.
 */
export function registerSecret(value: unknown, label: string, env: NodeJS.ProcessEnv = process.env): void {
  const file = env[TEST_SECRETS_FILE];
  // One character repeated is a mask ('********'), not a secret.
  if (!file || typeof value !== 'string' || value.length < MIN_SECRET_LENGTH || /^(.)\1*$/.test(value)) return;
  const forms = [value, Buffer.from(`${value}:`).toString('base64'), Buffer.from(value).toString('base64')];
  appendFileSync(file, forms.map((form, i) => `${JSON.stringify({ label: i === 0 ? label : `${label} (base64)`, value: form })}\n`).join(''));
}

/** Registers the secret-looking variables of a service's environment (the admin token, seed secrets). */
export function registerEnvSecrets(env: NodeJS.ProcessEnv, service: string): void {
  for (const [name, value] of Object.entries(env)) if (SECRET_ENV.test(name)) registerSecret(value, `${name} of ${service}`);
}

/** Where a service process's output goes for this run, or undefined when the run keeps no logs. */
export function serviceLogFile(service: string, pid: number | undefined, env: NodeJS.ProcessEnv = process.env): string | undefined {
  const dir = env[TEST_LOG_DIR];
  return dir ? join(dir, `${service}-${pid ?? 'nopid'}-${Date.now()}.log`) : undefined;
}

export interface Leak { file: string; line: number; label: string }

/**
 * Every (log file, line) holding a registered secret. Reports where and whose secret, never the
 * value. Whole files are searched with indexOf per secret (fast for long patterns), and only a hit
 * is turned into a line number.
 */
export function scanLogs(logDir: string, secretsFile: string): { files: number; bytes: number; secrets: number; leaks: Leak[] } {
  const secrets = new Map<string, string>();
  if (existsSync(secretsFile)) {
    for (const line of readFileSync(secretsFile, 'utf8').split('\n')) {
      if (!line) continue;
      try {
        const { label, value } = JSON.parse(line) as { label: string; value: string };
        if (!secrets.has(value)) secrets.set(value, label);
      } catch { /* a line cut short by a killed test process */ }
    }
  }
  const files = existsSync(logDir) ? readdirSync(logDir).filter((f) => f.endsWith('.log')).sort() : [];
  const leaks: Leak[] = [];
  let bytes = 0;
  for (const name of files) {
    const text = readFileSync(join(logDir, name), 'utf8');
    bytes += text.length;
    for (const [value, label] of secrets) {
      for (let at = text.indexOf(value); at !== -1; at = text.indexOf(value, at + value.length)) {
        leaks.push({ file: join(logDir, name), line: lineOf(text, at), label });
      }
    }
  }
  leaks.sort((a, b) => a.file.localeCompare(b.file) || a.line - b.line);
  return { files: files.length, bytes, secrets: secrets.size, leaks };
}

function lineOf(text: string, index: number): number {
  let line = 1;
  for (let i = text.indexOf('\n'); i !== -1 && i < index; i = text.indexOf('\n', i + 1)) line++;
  return line;
}
