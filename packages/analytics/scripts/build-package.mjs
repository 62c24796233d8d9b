// npm pack / npm publish (prepack): builds what the tarball ships, from clean, with the repo's
// TypeScript. dist/: the ES modules and their .d.ts (tsconfig.json, as `npm run build` emits them);
// dist/cjs/: CommonJS and its .d.ts (tsconfig.cjs.json), marked {"type":"commonjs"} so Node and
// TypeScript read both as CommonJS. package.json `exports` sends `import` to the first and
// `require` to the second.
import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const pkgDir = fileURLToPath(new URL('..', import.meta.url));
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
const run = (...args) => execFileSync(process.execPath, [tsc, ...args], { cwd: pkgDir, stdio: 'inherit' });

// From clean. The build info of `npm run build` goes too: it would tell tsc -b that the dist/ just
// deleted is up to date (and tsc here is not composite, so it neither reads nor writes one).
rmSync(new URL('../dist', import.meta.url), { recursive: true, force: true });
rmSync(new URL('../tsconfig.tsbuildinfo', import.meta.url), { force: true });
run('-p', 'tsconfig.json', '--composite', 'false', '--incremental', 'false');
run('-p', 'tsconfig.cjs.json');
mkdirSync(new URL('../dist/cjs', import.meta.url), { recursive: true });
writeFileSync(new URL('../dist/cjs/package.json', import.meta.url), '{ "type": "commonjs" }\n');
