// The NODE_OPTIONS a service's Kubernetes manifest sets (deploy/base/<name>.yaml: heap limits and
// sizes). The benchmark runs each service with them, as it is deployed.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { repoRoot } from '../stack/paths.js';

interface Container { env?: Array<{ name?: string; value?: string }> }
interface Manifest { kind?: string; spec?: { template?: { spec?: { containers?: Container[] } } } }

/** Read once per manifest: a run starts each service many times. */
const byFile = new Map<string, string>();

/** The manifest's NODE_OPTIONS for the service's container, or '' (no manifest, or none set). */
export function deployedNodeOptions(service: string, dir = join(repoRoot, 'deploy', 'base')): string {
  const file = join(dir, `${service}.yaml`);
  let options = byFile.get(file);
  if (options === undefined) byFile.set(file, (options = readNodeOptions(file)));
  return options;
}

function readNodeOptions(file: string): string {
  if (!existsSync(file)) return '';
  for (const doc of parseAllDocuments(readFileSync(file, 'utf8'))) {
    const m = doc.toJS() as Manifest | null;
    if (m?.kind !== 'Deployment') continue;
    for (const c of m.spec?.template?.spec?.containers ?? []) {
      const value = c.env?.find((e) => e.name === 'NODE_OPTIONS')?.value;
      if (value) return value;
    }
  }
  return '';
}
