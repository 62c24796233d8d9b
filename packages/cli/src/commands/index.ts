// The switchyard command tree. Each resource is a group of leaf specs in a file of its own;
// buildProgram wires them into commander in the order of `groups`, which is the order of
// `switchyard --help`, so a new resource is one more file and one more entry there.
import { Command } from 'commander';
import { AdminClient } from '../admin-client.js';
import { acls } from './acls.js';
import { audiences } from './audiences.js';
import { computedTraits } from './computed-traits.js';
import { deadLetters } from './dead-letters.js';
import { deletions } from './deletions.js';
import { destinations } from './destinations.js';
import { notificationEndpoints } from './notification-endpoints.js';
import { replays } from './replays.js';
import { signingSecrets } from './signing-secrets.js';
import { sources } from './sources.js';
import { CommandExit, type ActionContext, type GroupSpec, type LeafSpec } from './spec.js';
import { tokens } from './tokens.js';
import { writeKeys } from './write-keys.js';

export { CommandExit, type ActionContext, type GroupSpec, type LeafSpec, type Output } from './spec.js';

export const DEFAULT_ADMIN_URL = 'http://127.0.0.1:8081';

export interface ProgramIo {
  env: NodeJS.ProcessEnv;
  stdout: (s: string) => void;
  stderr: (s: string) => void;
  fetch: typeof fetch;
  now: () => Date;
  /** For polling commands (replays --watch); tests make it instant. */
  sleep?: (ms: number) => Promise<void>;
}

export const groups: readonly GroupSpec[] = [sources, writeKeys, destinations, signingSecrets, notificationEndpoints, replays, deadLetters, deletions, audiences, computedTraits, tokens];

/** Commands of their own, after the groups in `switchyard --help`. */
export const standalone: readonly LeafSpec[] = [acls];

/**
 * The commander program for one invocation. It never exits the process: errors are thrown as
 * CommanderError (exitOverride) and all output goes through io.
 */
export function buildProgram(io: ProgramIo): Command {
  const program = new Command('switchyard')
    .description("Client of Switchyard's admin HTTP API.")
    // Set before adding subcommands, which copy these settings from their parent.
    .exitOverride()
    .configureOutput({ writeOut: io.stdout, writeErr: io.stderr })
    .showHelpAfterError('(add --help for usage)')
    // Global options go before the command: `destinations create` has a --url of its own.
    .enablePositionalOptions()
    .option('--url <url>', `admin API base URL (default: $SWITCHYARD_ADMIN_URL, else ${DEFAULT_ADMIN_URL})`)
    .option('--token <token>', 'admin API token (default: $SWITCHYARD_ADMIN_TOKEN)')
    .option('--json', "print the API's JSON response instead of the readable form")
    .addHelpText('after', '\nGlobal options go before the command, e.g. switchyard --url http://admin:8081 sources list.\n--json may also follow the command.');

  for (const group of groups) {
    const groupCommand = program.command(group.name).description(group.summary);
    for (const leaf of group.commands) addLeaf(program, groupCommand, leaf, io);
  }
  for (const leaf of standalone) addLeaf(program, program, leaf, io);
  return program;
}

function addLeaf(program: Command, parent: Command, leaf: LeafSpec, io: ProgramIo): void {
  const command = parent.command(leaf.usage).description(leaf.summary);
  for (const option of leaf.options?.() ?? []) command.addOption(option);
  if (leaf.help !== undefined) command.addHelpText('after', leaf.help);
  command.option('--json', "print the API's JSON response instead of the readable form");
  command.action(async () => {
    const ctx = actionContext(program, command, io);
    // A variadic argument (<id...>) arrives as one array: spread it, so args is flat.
    const args = (command.processedArgs as (string | string[])[]).flat();
    const out = await leaf.run(ctx, args, command.opts());
    const json = program.opts<{ json?: boolean }>().json === true || command.opts<{ json?: boolean }>().json === true;
    if (!json) io.stdout(out.text);
    else if (out.json !== undefined) io.stdout(`${JSON.stringify(out.json, null, 2)}\n`);
    if (out.warning !== undefined) io.stderr(out.warning);
    if (out.exitCode !== undefined && out.exitCode !== 0) throw new CommandExit(out.exitCode);
  });
}

function actionContext(program: Command, command: Command, io: ProgramIo): ActionContext {
  const usage = (message: string): never => command.error(`error: ${message}`, { exitCode: 2, code: 'switchyard.usage' });
  return {
    usage,
    now: io.now,
    progress: (line) => io.stderr(`\r${line}\u001b[K`),
    sleep: io.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms))),
    env: (name) => io.env[name] || undefined,
    client() {
      const globals = program.opts<{ url?: string; token?: string }>();
      // An empty variable counts as unset, as `export VAR=` usually means "no value".
      const token = globals.token || io.env.SWITCHYARD_ADMIN_TOKEN;
      if (!token) return usage('no admin token: pass --token <token> or set SWITCHYARD_ADMIN_TOKEN');
      const baseUrl = globals.url || io.env.SWITCHYARD_ADMIN_URL || DEFAULT_ADMIN_URL;
      if (!URL.canParse(baseUrl) || !/^https?:$/.test(new URL(baseUrl).protocol)) {
        usage(`admin API URL must be an http(s) URL, got "${baseUrl}"`);
      }
      return new AdminClient({ baseUrl, token, fetch: io.fetch });
    },
  };
}
