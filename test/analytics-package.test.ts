// @switchyard/analytics as a user gets it: `npm pack` in the package, `npm install <tarball>` into an
// empty project outside the repository (so nothing resolves from the repo's node_modules), then
// plain `node` scripts — one `import`, one `require` — send calls to the real ingest service and
// they reach the ingest topic. The tarball ships both builds with their .d.ts, README and LICENSE,
// and a TypeScript consumer (.mts and .cts) type-checks against the installed package.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, it } from 'node:test';
import { promisify } from 'node:util';
import { topicNames } from '@switchyard/platform/kafka/topics';
import { repoRoot } from '../tools/stack/paths.js';
import { makeSource, writeConfig } from './support/config.js';
import { pipelineEnv, setupTopics, startService, type RunningService } from './support/services.js';
import { uniquePrefix } from './support/stack.js';
import { TopicReader } from './support/topic-reader.js';

type Rec = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- decoded records
const run = promisify(execFile);
const packageDir = join(repoRoot, 'packages/analytics');
const prefix = uniquePrefix('package');
const topics = topicNames(prefix);
const source = makeSource();
const packDir = mkdtempSync(join(tmpdir(), 'switchyard-analytics-pack-'));
const projectDir = mkdtempSync(join(tmpdir(), 'switchyard-analytics-consumer-'));
// No npm_* variables of the `npm test` that runs this (npm_config_local_prefix would point npm
// back at the repository) and no NODE_OPTIONS: the consumer runs plain node.
const cleanEnv = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^npm_/i.test(k) && k !== 'NODE_OPTIONS'));
const limits = { env: cleanEnv, timeout: 60_000, maxBuffer: 16 * 1024 * 1024 };
let ingest: RunningService;
let reader: TopicReader;
let tarball: string;

before(async () => {
  const env = pipelineEnv(prefix);
  const pack = run('npm', ['pack', '--pack-destination', packDir, '--json'], { ...limits, cwd: packageDir });
  await setupTopics(env);
  await writeConfig(prefix, { sources: [source] });
  [ingest, reader] = await Promise.all([startService('ingest', env), new TopicReader([topics.ingest]).start()]);
  const [packed] = JSON.parse((await pack).stdout) as [{ filename: string }];
  tarball = join(packDir, packed.filename);
  writeFileSync(join(projectDir, 'package.json'), JSON.stringify({ name: 'consumer', version: '1.0.0', private: true }));
  // The package has no dependencies, so nothing needs the registry.
  await run('npm', ['install', tarball, '--offline', '--no-audit', '--no-fund', '--no-update-notifier'], { ...limits, cwd: projectDir });
});
after(async () => {
  await reader?.stop();
  await ingest?.stop();
  rmSync(packDir, { recursive: true, force: true });
  rmSync(projectDir, { recursive: true, force: true });
});

it('the tarball ships both builds with their .d.ts, the sources its `source` condition names, README and LICENSE; no tests', async () => {
  const files = (await run('tar', ['-tzf', tarball], limits)).stdout.split('\n').filter(Boolean).map((f) => f.replace(/^package\//, ''));
  for (const f of ['package.json', 'README.md', 'LICENSE', 'dist/index.js', 'dist/index.d.ts', 'dist/cjs/index.js', 'dist/cjs/index.d.ts', 'dist/cjs/package.json', 'src/index.ts']) {
    assert.ok(files.includes(f), `the tarball has ${f}`);
  }
  assert.deepEqual(files.filter((f) => /\.test\.ts$|test-support|tsbuildinfo|\.tgz$/.test(f)), []);
  const installed = join(projectDir, 'node_modules/@switchyard/analytics');
  assert.match(readFileSync(join(installed, 'LICENSE'), 'utf8'), /Apache License\s+Version 2\.0, January 2004/);
  // Every file package.json points at is in the package (a condition naming a missing file
  // breaks whoever sets it).
  const pkg = JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8')) as Rec;
  assert.equal(pkg.license, 'Apache-2.0');
  const targets = JSON.stringify([pkg.exports, pkg.main, pkg.types]).match(/"\.\/[^"]+"/g)!.map((t) => JSON.parse(t) as string);
  for (const t of targets) assert.ok(existsSync(join(installed, t)), `${t} exists in the installed package`);
  assert.deepEqual(JSON.parse(readFileSync(join(installed, 'dist/cjs/package.json'), 'utf8')), { type: 'commonjs' });
});

it('installed from the tarball, `import` (ESM) and `require` (CommonJS, require(esm) off) each send calls that reach the ingest topic', async () => {
  const id = randomUUID();
  const send = (via: string) => `
    const analytics = new Analytics(process.env.WRITE_KEY, { endpoint: process.env.ENDPOINT, maxRetries: 2 });
    const errors = [];
    analytics.on('error', (err) => errors.push(err.code + ': ' + err.message));
    analytics.track({ messageId: '${via}-${id}', userId: 'package-${id}', event: 'Installed', properties: { via: '${via}' }, timestamp: 'Thu, 07 Mar 2024 10:00:00 GMT' });
    analytics.identify({ messageId: '${via}-identify-${id}', userId: 'package-${id}', traits: { via: '${via}' } });`;
  writeFileSync(join(projectDir, 'send.mjs'), `import { Analytics } from '@switchyard/analytics';
    ${send('import')}
    await analytics.close();
    console.log(JSON.stringify({ resolved: import.meta.resolve('@switchyard/analytics'), errors }));\n`);
  writeFileSync(join(projectDir, 'send.cjs'), `const { Analytics } = require('@switchyard/analytics');
    ${send('require')}
    analytics.close().then(() => console.log(JSON.stringify({ resolved: require.resolve('@switchyard/analytics'), errors })));\n`);
  const env = { ...cleanEnv, WRITE_KEY: source.writeKeys[0]!, ENDPOINT: ingest.url };
  // Node 20.18 (engines allows it) cannot require() an ES module; later versions can unless told
  // not to, so the CommonJS script runs with that turned off.
  const noRequireEsm = process.allowedNodeEnvironmentFlags.has('--experimental-require-module') ? ['--no-experimental-require-module'] : [];
  const [esm, cjs] = await Promise.all([
    run(process.execPath, ['send.mjs'], { ...limits, env, cwd: projectDir }),
    run(process.execPath, [...noRequireEsm, 'send.cjs'], { ...limits, env, cwd: projectDir }),
  ]);
  const esmOut = JSON.parse(esm.stdout) as { resolved: string; errors: string[] };
  const cjsOut = JSON.parse(cjs.stdout) as { resolved: string; errors: string[] };
  assert.deepEqual([esmOut.errors, cjsOut.errors], [[], []]);
  assert.equal(esmOut.resolved, `file://${join(projectDir, 'node_modules/@switchyard/analytics/dist/index.js')}`);
  assert.equal(cjsOut.resolved, join(projectDir, 'node_modules/@switchyard/analytics/dist/cjs/index.js'));

  const ids = ['import', 'require'].flatMap((via) => [`${via}-${id}`, `${via}-identify-${id}`]);
  const got = new Map((await reader.waitFor<Rec>(topics.ingest, (v) => ids.includes(v.messageId), ids.length)).map((v) => [v.messageId, v]));
  for (const via of ['import', 'require']) {
    const track = got.get(`${via}-${id}`)!;
    assert.deepEqual([track.event, JSON.parse(track.properties)], ['Installed', { via }]);
    assert.equal(JSON.parse(track.context).library.name, '@switchyard/analytics');
    assert.equal(track.originalTimestamp, Date.parse('2024-03-07T10:00:00Z'));
    assert.deepEqual(JSON.parse(got.get(`${via}-identify-${id}`)!.traits), { via });
  }
});

it('a TypeScript consumer type-checks against the installed package, as ESM (.mts) and as CommonJS (.cts)', async () => {
  const body = `
    const options: AnalyticsOptions = { endpoint: 'http://127.0.0.1:8080', flushAt: 1 };
    const analytics = new Analytics('write-key', options);
    const message: TrackMessage = { userId: 'u', event: 'Signed Up', timestamp: new Date() };
    analytics.track(message, (err) => { if (err instanceof AnalyticsError) console.error(err.code satisfies AnalyticsErrorCode, err.retriable); });
    analytics.on('sent', (batch) => console.log(batch.messages.length satisfies number));
    // @ts-expect-error track needs an event: the types are the package's, not any.
    analytics.track({ userId: 'u' });
    void analytics.close();
    export {};`;
  const imports = `import { Analytics, AnalyticsError, type AnalyticsErrorCode, type AnalyticsOptions, type TrackMessage } from '@switchyard/analytics';`;
  writeFileSync(join(projectDir, 'consumer.mts'), imports + body);
  writeFileSync(join(projectDir, 'consumer.cts'), imports + body);
  writeFileSync(join(projectDir, 'tsconfig.json'), JSON.stringify({
    compilerOptions: {
      module: 'nodenext', moduleResolution: 'nodenext', target: 'es2022', strict: true, noEmit: true,
      // The package's own .d.ts are checked too; Node's types come from the repo (a Node consumer has them).
      skipLibCheck: false, types: ['node'], typeRoots: [join(repoRoot, 'node_modules/@types')],
    },
    files: ['consumer.mts', 'consumer.cts'],
  }));
  const tsc = join(repoRoot, 'node_modules/typescript/bin/tsc');
  const result = await run(process.execPath, [tsc, '-p', 'tsconfig.json', '--listFiles'], { ...limits, cwd: projectDir }).catch((err: { stdout: string }) => {
    assert.fail(`tsc failed:\n${err.stdout}`);
  });
  // Each file's import resolved to the declarations of its own build.
  const listed = result.stdout.split('\n');
  for (const d of ['dist/index.d.ts', 'dist/cjs/index.d.ts']) {
    assert.ok(listed.includes(join(projectDir, 'node_modules/@switchyard/analytics', d)), `tsc read ${d}`);
  }
  assert.ok(!listed.some((f) => f.includes('/src/') && f.includes('@switchyard/analytics')), 'no sources: the consumer does not set the source condition');
});
