// Summarises V8 CPU profiles (.cpuprofile, as written by `node --cpu-prof`): the functions with the
// most self time, and the share by package (node_modules/<pkg>, the repository's own code, node
// internals, GC). `npm run bench -- --quick --profile` writes one profile per service process under
// bench-results/profiles-<time>/ and prints this summary; it can also be run on its own:
//   node --import tsx tools/bench/profile.ts bench-results/profiles-…/*.cpuprofile
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, join } from 'node:path';

interface ProfileNode { id: number; callFrame: { functionName: string; url: string; lineNumber: number }; hitCount?: number }
interface CpuProfile { nodes: ProfileNode[]; startTime: number; endTime: number; samples?: number[] }

function where(url: string): string {
  if (!url) return '(native/gc)';
  if (url.startsWith('node:')) return 'node internals';
  const nm = url.lastIndexOf('node_modules/');
  if (nm >= 0) { const rest = url.slice(nm + 13).split('/'); return rest[0]!.startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0]!; }
  const m = /\/(services|packages)\/([^/]+)\//.exec(url);
  return m ? `${m[1]}/${m[2]}` : url.split('/').slice(-2).join('/');
}

export function summarise(file: string, top = 12): string {
  const p = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  const total = p.nodes.reduce((n, x) => n + (x.hitCount ?? 0), 0) || 1;
  const ms = (p.endTime - p.startTime) / 1000;
  const byFn = new Map<string, number>();
  const byPkg = new Map<string, number>();
  let idle = 0;
  for (const n of p.nodes) {
    const hits = n.hitCount ?? 0;
    if (!hits) continue;
    const f = n.callFrame;
    if (f.functionName === '(idle)' || f.functionName === '(program)') { idle += f.functionName === '(idle)' ? hits : 0; }
    const key = `${f.functionName || '(anonymous)'} ${f.url ? `${f.url.replace(/^file:\/\/.*?\/(node_modules|services|packages|tools)\//, '$1/')}:${f.lineNumber + 1}` : ''}`;
    byFn.set(key, (byFn.get(key) ?? 0) + hits);
    const pkg = f.functionName === '(idle)' ? '(idle)' : f.functionName === '(garbage collector)' ? '(gc)' : where(f.url);
    byPkg.set(pkg, (byPkg.get(pkg) ?? 0) + hits);
  }
  const pct = (h: number) => `${((100 * h) / total).toFixed(1)}%`;
  const lines = [`${basename(file)}: ${(ms / 1000).toFixed(1)} s profiled, busy ${pct(total - idle)}`];
  lines.push('  by package: ' + [...byPkg].sort((a, b) => b[1] - a[1]).slice(0, 8).map(([k, v]) => `${k} ${pct(v)}`).join(', '));
  for (const [k, v] of [...byFn].filter(([k]) => !k.startsWith('(idle)')).sort((a, b) => b[1] - a[1]).slice(0, top)) lines.push(`  ${pct(v).padStart(6)}  ${k}`);
  return lines.join('\n');
}

export function summariseDir(dir: string): string {
  return readdirSync(dir).filter((f) => f.endsWith('.cpuprofile')).map((f) => join(dir, f)).sort((a, b) => statSync(a).size - statSync(b).size).reverse().map((f) => summarise(f)).join('\n\n');
}

if (process.argv[1] && basename(process.argv[1]) === 'profile.ts') {
  for (const f of process.argv.slice(2)) console.log(statSync(f).isDirectory() ? summariseDir(f) : summarise(f));
}
