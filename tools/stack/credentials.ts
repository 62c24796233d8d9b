// The secured stack's SCRAM users and their passwords: random, generated when the stack's storage is
// new and kept beside it (the broker's storage holds the SCRAM credentials made from them at format
// time, so they live exactly as long as it), one file per user, mode 0600 in a 0700 directory.
// Passwords are never printed or logged; what is shown is where their files are.
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

export interface Credential {
  user: string;
  /** The password alone, no newline (KAFKA_SASL_PASSWORD_FILE). */
  passwordFile: string;
  password: string;
}

/**
 * 32 random bytes in base64url: letters, digits, `-` and `_` only, so a password needs no quoting in
 * a JAAS line, a properties file or kafka-storage's `--add-scram` syntax.
 */
export const newPassword = (): string => randomBytes(32).toString('base64url');

/**
 * Each user's credential from dir, made (with a new password) where missing, unless `existing`:
 * storage formatted with the old passwords would refuse new ones.
 */
export function ensureCredentials(dir: string, users: readonly string[], { existing = false } = {}): Map<string, Credential> {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  chmodSync(dir, 0o700);
  return new Map(users.map((user) => {
    if (!/^[\w.-]+$/.test(user)) throw new Error(`user name ${JSON.stringify(user)}: letters, digits, '.', '_' and '-' only`);
    const passwordFile = join(dir, `${user}.password`);
    if (!existsSync(passwordFile)) {
      if (existing) throw new Error(`${passwordFile} is missing, but the broker's storage was formatted with its password: delete ${dirname(dir)} to start over`);
      writeFileSync(passwordFile, newPassword(), { mode: 0o600 });
    }
    chmodSync(passwordFile, 0o600);
    return [user, { user, passwordFile, password: readFileSync(passwordFile, 'utf8').trim() }];
  }));
}

/** A value as a POSIX shell word: as it is when safe, else single-quoted. */
export const shellWord = (value: string): string => (/^[\w.:/@%+=,-]*$/.test(value) ? value : `'${value.replace(/'/g, `'\\''`)}'`);

/** Writes variables as `NAME=value` lines a shell reads with `set -a; . file; set +a`, mode 0600. */
export function writeEnvFile(file: string, vars: Record<string, string>, comment: string[] = []): void {
  const lines = [...comment.map((c) => `# ${c}`), ...Object.entries(vars).map(([k, v]) => `${k}=${shellWord(v)}`), ''];
  writeFileSync(file, lines.join('\n'), { mode: 0o600 });
  chmodSync(file, 0o600);
}
