// One invocation of the CLI, as a function: argv in, exit code out, all I/O injectable so
// tests (and embedders) can drive it without a process of its own.
import { CommanderError } from 'commander';
import { AdminApiError, AdminConnectionError } from './admin-client.js';
import { buildProgram, CommandExit } from './commands/index.js';

export interface RunIo {
  env?: NodeJS.ProcessEnv;
  stdout?: (s: string) => void;
  stderr?: (s: string) => void;
  fetch?: typeof fetch;
  /** The clock for times relative to now (--since 1h). */
  now?: () => Date;
  /** Waits between polls (replays --watch); tests make it instant. */
  sleep?: (ms: number) => Promise<void>;
}

/**
 * Runs `switchyard <argv...>` and resolves to its exit code: 0 success, 1 the API answered an
 * error or could not be reached (or the command could not do what was asked, e.g. `dead-letters
 * replay` found none of the ids), 2 a usage error. Never calls process.exit.
 */
export async function run(argv: string[], io: RunIo = {}): Promise<number> {
  const stderr = io.stderr ?? ((s: string) => void process.stderr.write(s));
  const program = buildProgram({
    env: io.env ?? process.env,
    stdout: io.stdout ?? ((s: string) => void process.stdout.write(s)),
    stderr,
    fetch: io.fetch ?? globalThis.fetch,
    now: io.now ?? (() => new Date()),
    ...(io.sleep ? { sleep: io.sleep } : {}),
  });
  try {
    await program.parseAsync(argv, { from: 'user' });
    return 0;
  } catch (err) {
    // Commander has already printed its message; exit code 0 means help was asked for.
    // The command has printed its output and says why it did not succeed.
    if (err instanceof CommandExit) return err.exitCode;
    if (err instanceof CommanderError) return err.exitCode === 0 ? 0 : 2;
    if (err instanceof AdminApiError) {
      stderr(`error ${err.code}: ${err.message}${err.field === undefined ? '' : ` (field: ${err.field})`}\n`);
      return 1;
    }
    if (err instanceof AdminConnectionError) {
      stderr(`error ${err.code}: ${err.message}\n`);
      return 1;
    }
    // Anything else is a bug in the CLI: let it surface with its stack.
    throw err;
  }
}
