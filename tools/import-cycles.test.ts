import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join, relative, resolve, sep } from 'node:path';
import { describe, it } from 'node:test';
import ts from 'typescript';
import { repoRoot } from './stack/paths.js';

// The project rule: no import cycles among the repository's own modules, type-only imports
// included (a cycle of types still ties two modules into one). Imports are read and resolved by
// the TypeScript compiler with the repository's tsconfig.json, as `npm run typecheck` resolves them
// (workspace packages by their `source` condition), so what this sees is what the compiler sees.

/** Every module of the repository and the repository modules each imports. */
function importGraph(): Map<string, string[]> {
  const root = resolve(repoRoot) + sep;
  const configPath = join(repoRoot, 'tsconfig.json');
  const config = ts.getParsedCommandLineOfConfigFile(configPath, {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: (d) => { throw new Error(ts.flattenDiagnosticMessageText(d.messageText, '\n')); } });
  if (!config) throw new Error(`cannot read ${configPath}`);
  const cache = ts.createModuleResolutionCache(repoRoot, (f) => f, config.options);
  const graph = new Map<string, string[]>();
  for (const file of config.fileNames) {
    const imports: string[] = [];
    for (const { fileName: specifier } of ts.preProcessFile(readFileSync(file, 'utf8'), true, true).importedFiles) {
      const resolved = ts.resolveModuleName(specifier, file, config.options, ts.sys, cache).resolvedModule;
      // Workspace packages resolve through node_modules' links to their source here: kept.
      const target = resolved && ts.sys.realpath ? ts.sys.realpath(resolved.resolvedFileName) : resolved?.resolvedFileName;
      if (target && target.startsWith(root) && !target.includes('/node_modules/')) imports.push(target);
    }
    graph.set(file, imports);
  }
  return graph;
}

/** One cycle through each strongly connected group of modules (Tarjan's algorithm), as paths. */
export function cyclesOf(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  const visit = (node: string): void => {
    index.set(node, index.size);
    low.set(node, index.get(node)!);
    stack.push(node);
    onStack.add(node);
    for (const next of graph.get(node) ?? []) {
      if (!index.has(next)) { visit(next); low.set(node, Math.min(low.get(node)!, low.get(next)!)); }
      else if (onStack.has(next)) low.set(node, Math.min(low.get(node)!, index.get(next)!));
    }
    if (low.get(node) !== index.get(node)) return;
    const group: string[] = [];
    let member: string;
    do { member = stack.pop()!; onStack.delete(member); group.push(member); } while (member !== node);
    if (group.length > 1 || graph.get(node)?.includes(node)) cycles.push(group.reverse());
  };
  for (const node of graph.keys()) if (!index.has(node)) visit(node);
  return cycles;
}

describe('import cycles', () => {
  it('finds a cycle, and only a cycle', () => {
    assert.deepEqual(cyclesOf(new Map([['a', ['b']], ['b', ['c']], ['c', ['a']], ['d', ['a']]])), [['a', 'b', 'c']]);
    assert.deepEqual(cyclesOf(new Map([['a', ['b']], ['b', []]])), []);
    assert.deepEqual(cyclesOf(new Map([['a', ['a']]])), [['a']]);
  });

  it('no module of the repository imports itself through others', () => {
    const graph = importGraph();
    assert.ok(graph.size > 300, `only ${graph.size} modules read`);
    const delivery = join(repoRoot, 'services/delivery/src/delivery-consumer.ts');
    assert.ok(graph.get(delivery)?.includes(join(repoRoot, 'services/delivery/src/admission.ts')), 'imports are resolved');
    assert.ok(graph.get(delivery)?.includes(join(repoRoot, 'packages/platform/src/errors.ts')), 'workspace packages are resolved to their source');
    const cycles = cyclesOf(graph).map((c) => c.map((f) => relative(repoRoot, f)).join(' → '));
    assert.deepEqual(cycles, [], `import cycles (move what both sides need into a module of its own):\n${cycles.join('\n')}`);
  });
});
