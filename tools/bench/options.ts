// The command line of `npm run bench`: the mode (--tiny, --quick, else full), --only, --out,
// --profile, --task-hops and --source.
export type Mode = 'tiny' | 'quick' | 'full';

/** The scenarios `--only` can pick (each runs the baselines it is compared with). */
export const SCENARIOS = ['idle', 'ingest', 'e2e', 'attempts', 'latency', 'storm', 'slow', 'isolation', 'ratelimit', 'fanout', 'cpu', 'parts', 'horizontal', 'backlog', 'many', 'failover'] as const;
export type Scenario = typeof SCENARIOS[number];

export interface Options {
  mode: Mode;
  only: Set<Scenario>;
  /** --out FILE: where the JSON goes (else bench-results/<start time>-<mode>.json). */
  out: string | undefined;
  /** --profile: every service process writes a V8 CPU profile on exit. */
  profile: boolean;
  /** --task-hops: the latency rows also read the delivery topic and split fan-out → delivery (hops.ts). It costs the bench CPU. */
  taskHops: boolean;
  /** --source: run the services from TypeScript through tsx, as `npm start` does, instead of built. */
  source: boolean;
}

export function parseOptions(args: string[]): Options {
  const outArg = args.indexOf('--out');
  return {
    mode: args.includes('--tiny') ? 'tiny' : args.includes('--quick') ? 'quick' : 'full',
    only: parseOnly(args),
    out: outArg >= 0 ? args[outArg + 1]! : undefined,
    profile: args.includes('--profile'),
    taskHops: args.includes('--task-hops'),
    source: args.includes('--source'),
  };
}

/** `--only isolation,attempts`: those scenarios; absent: every scenario. */
export function parseOnly(args: string[]): Set<Scenario> {
  const i = args.indexOf('--only');
  if (i < 0) return new Set(SCENARIOS);
  const names = (args[i + 1] ?? '').split(',').filter(Boolean);
  const unknown = names.filter((n) => !(SCENARIOS as readonly string[]).includes(n));
  if (names.length === 0 || unknown.length) throw new Error(`--only takes a comma-separated list of ${SCENARIOS.join(', ')}; got ${JSON.stringify(args[i + 1] ?? '')}`);
  return new Set(names as Scenario[]);
}
