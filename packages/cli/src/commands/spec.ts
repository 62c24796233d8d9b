// The shape of a command: a resource is a group of small leaf specs (usage, options, run) that
// buildProgram (index.ts) wires into commander. A leaf returns its Output and never prints itself.
import type { Option, OptionValues } from 'commander';
import type { AdminClient } from '../admin-client.js';

/** What a command prints: the API's JSON body for --json (none after a 204), else readable text. */
export interface Output {
  json: unknown;
  text: string;
  /** Written to stderr after the output, with or without --json. */
  warning?: string;
  /** Exit code when the API call succeeded but the command did not do what was asked. */
  exitCode?: number;
}

/** Thrown after a command has printed its output, to end with a non-zero exit code. */
export class CommandExit extends Error {
  readonly exitCode: number;

  constructor(exitCode: number) {
    super(`exit code ${exitCode}`);
    this.name = 'CommandExit';
    this.exitCode = exitCode;
  }
}

export interface ActionContext {
  /** The API client; reports a usage error when there is no token or the URL is bad. */
  client(): AdminClient;
  /** Reports a usage error (exit code 2); never returns. */
  usage(message: string): never;
  /** The current time, for flags relative to it (--since 1h). */
  now(): Date;
  /** Live progress on stderr (a line redrawn in place), never mixed into the output. */
  progress(line: string): void;
  sleep(ms: number): Promise<void>;
  /** An environment variable; an empty one counts as unset. */
  env(name: string): string | undefined;
}

export interface LeafSpec {
  /** Name and arguments, as commander takes them: 'update <id>'. */
  usage: string;
  summary: string;
  /** Shown after the options in --help. */
  help?: string;
  /** A factory, so every program gets its own Option objects. */
  options?: () => Option[];
  // A method, so each spec may declare the exact shape of its options. args holds the
  // arguments in order, the values of a variadic last one (<id...>) spread at the end.
  run(ctx: ActionContext, args: string[], opts: OptionValues): Promise<Output>;
}

export interface GroupSpec {
  name: string;
  summary: string;
  commands: readonly LeafSpec[];
}

/** The output of a delete: a line saying what went, nothing with --json (the API answers 204). */
export const deleted = (kind: string, id: string): Output => ({ json: undefined, text: `deleted ${kind} ${id}\n` });
