import { homedir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root. */
export const repoRoot = fileURLToPath(new URL('../..', import.meta.url));

/** Downloaded artifacts live outside git: $SWITCHYARD_CACHE, else $XDG_CACHE_HOME/switchyard, else ~/.cache/switchyard. */
export function cacheDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.SWITCHYARD_CACHE) return env.SWITCHYARD_CACHE;
  return join(env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'switchyard');
}

/** Pinned versions of the real infrastructure. Changing one means updating artifacts.lock.json (npm run stack -- fetch --update-lock). */
export const versions = {
  kafka: '3.9.2',
  scala: '2.13',
  reload4j: '1.2.25',
  slf4j: '1.7.36',
  apicurio: '3.0.9',
  dependencyPlugin: '3.8.1',
  // 3.x resolves the parent POM even with transitive=false, and Apicurio's is not published.
  dependencyPluginGet: '2.8',
} as const;
