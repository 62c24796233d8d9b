import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { extractReferences, isPathWord, notARepoPath, problemOf, RUNTIME_FOLDERS, TrackedFiles, type Reference } from './doc-references.js';
import { repoRoot } from './stack/paths.js';

// Every file, folder and link that these documents name exists (the rules: tools/doc-references.ts).
// ARCHITECTURE.md and docs/internals/ describe the code, so a moved or removed file makes them
// untrue; the reference pages, README.md and the two results documents are held to the same rules.

function trackedFiles(): string[] {
  return execFileSync('git', ['ls-files', '-z'], { cwd: repoRoot, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 }).split('\0').filter((f) => f !== '');
}

/** The documents checked: ARCHITECTURE.md, docs/*.md, docs/internals/*.md, README.md, BENCHMARKS.md, RELIABILITY.md. */
function documents(files: readonly string[]): string[] {
  return files.filter((f) => ['ARCHITECTURE.md', 'README.md', 'BENCHMARKS.md', 'RELIABILITY.md'].includes(f) || /^docs\/(internals\/)?[^/]+\.md$/.test(f));
}

const code = (text: string): Reference => ({ doc: 'ARCHITECTURE.md', line: 1, kind: 'code', text });
const link = (doc: string, text: string): Reference => ({ doc, line: 1, kind: 'link', text });
const words = (markdown: string): string[] => extractReferences('X.md', markdown).map((r) => `${r.kind}:${r.text}`);

describe('document references: the rules', () => {
  it('reads inline-code words with a slash or a file extension, and link targets, and nothing in fenced blocks', () => {
    assert.deepEqual(words('`task-runner.ts` (`services/delivery`), `kafkajs/a.ts (with b.ts, c.ts)` and [d](docs/d.md#x)'), [
      'code:task-runner.ts', 'code:services/delivery', 'code:kafkajs/a.ts', 'code:b.ts', 'code:c.ts', 'link:docs/d.md',
    ]);
    assert.deepEqual(words('```\n`inside.ts` [x](y.md)\n```\n`after.ts`'), ['code:after.ts']);
    assert.deepEqual(words('[site](https://example.com/a.ts), [here](#section), `src/x.ts:12`'), ['code:src/x.ts']);
    assert.deepEqual(words('[`code.ts`](code.ts)'), ['code:code.ts', 'link:code.ts']);
  });

  it('does not take topics, record names, variables, settings, templates or extensions for paths', () => {
    for (const w of ['delivery.retry.N', 'pipeline.DeliveryTask', 'KAFKA_BROKERS', 'acks=all', '<prefix>fanout-p<N>', 'sourceId|day|writer', '.avsc', '.d.ts', '*', 'switchyard.']) {
      assert.equal(isPathWord(w), false, w);
    }
    for (const w of ['config.ts', 'kafka/topics.ts', 'services/delivery/', 'dist/', '*.test.ts', '.ci/run']) assert.equal(isPathWord(w), true, w);
  });

  it('treats routes, MIME types, address blocks and run-time output as no repository paths', () => {
    assert.equal(notARepoPath('/v1/batch'), 'an HTTP route');
    assert.equal(notARepoPath('application/json'), 'a MIME type');
    assert.equal(notARepoPath('127.0.0.0/8'), 'an address block');
    assert.equal(notARepoPath('.switchyard/secure/client.env'), 'run-time output');
    assert.equal(notARepoPath('services/delivery/src/task-runner.ts'), undefined);
  });

  it('finds a file by its path or a trailing run of its segments, a folder likewise, and nothing else', () => {
    const tracked = new TrackedFiles(['services/delivery/src/task-runner.ts', 'packages/platform/src/kafkajs/heartbeat.ts', 'docs/internals/fanout.md', '.ci/run']);
    const ok = (r: Reference): boolean => problemOf(r, tracked, repoRoot) === undefined;
    assert.ok(ok(code('task-runner.ts')));
    assert.ok(ok(code('src/task-runner.ts')));
    assert.ok(ok(code('src/kafkajs/heartbeat.ts')));
    assert.ok(ok(code('services/delivery')));
    assert.ok(ok(code('services/delivery/')));
    assert.ok(ok(code('src/kafkajs/')));
    assert.ok(ok(code('*-runner.ts')));
    assert.ok(ok(code('.ci/run')));
    assert.ok(!ok(code('runner.ts')), 'a name is matched whole, not as the end of another');
    assert.ok(!ok(code('kafka/heartbeat.ts')), 'every segment given must match');
    assert.ok(!ok(code('kafkajs-rejoin-hook.ts')));
    assert.ok(!ok(code('services/fanout/')));
    assert.ok(!ok(code('task-runner.ts/')), 'a file is no folder');
    assert.ok(ok({ doc: 'docs/internals/README.md', line: 1, kind: 'code', text: 'fanout.md' }), 'a document beside this one');
    assert.ok(!ok({ doc: 'docs/tracking-api.md', line: 1, kind: 'code', text: 'fanout.md' }), 'a bare document name is not searched for');
  });

  it('resolves links against the linking document, exactly', () => {
    const tracked = new TrackedFiles(['ARCHITECTURE.md', 'docs/internals/fanout.md', 'docs/decisions/0001-a.md']);
    const ok = (r: Reference): boolean => problemOf(r, tracked, repoRoot) === undefined;
    assert.ok(ok(link('docs/internals/fanout.md', '../../ARCHITECTURE.md')));
    assert.ok(ok(link('docs/internals/README.md', 'fanout.md')));
    assert.ok(ok(link('ARCHITECTURE.md', 'docs/decisions/')));
    assert.ok(!ok(link('ARCHITECTURE.md', 'fanout.md')), 'no search for links');
    assert.ok(!ok(link('docs/internals/fanout.md', '../../../outside.md')));
  });

  it('accepts build output of a folder that exists, and files of installed packages', () => {
    const tracked = new TrackedFiles(['services/delivery/src/main.ts']);
    const ok = (r: Reference): boolean => problemOf(r, tracked, repoRoot) === undefined;
    assert.ok(ok(code('dist/main.js')));
    assert.ok(ok(code('services/delivery/dist/main.js')));
    assert.ok(!ok(code('services/nothing/dist/main.js')));
    assert.ok(ok(code('undici/lib/core/errors.js')), 'a file of a dependency, as written');
    assert.ok(ok(code('producer/sendMessages.js')), "a kafkajs module by its path in kafkajs's src/");
    assert.ok(ok(code('@segment/analytics-next')));
    assert.ok(!ok(code('undici/lib/nothing.js')));
    assert.ok(!ok(code('recordBatch/v0/index.js')), "kafkajs's modules are named from src/");
  });
});

describe('document references', () => {
  it('the run-time folders are git-ignored', () => {
    const ignored = readFileSync(join(repoRoot, '.gitignore'), 'utf8').split('\n').map((l) => l.trim());
    for (const folder of RUNTIME_FOLDERS) assert.ok(ignored.includes(`${folder}/`), `${folder}/ is not in .gitignore`);
  });

  it('every file, folder and link named in ARCHITECTURE.md, docs/, README.md, BENCHMARKS.md and RELIABILITY.md exists', () => {
    const files = trackedFiles();
    const tracked = new TrackedFiles(files);
    const docs = documents(files);
    assert.ok(docs.includes('ARCHITECTURE.md') && docs.includes('docs/internals/delivery.md') && docs.includes('docs/configuration.md'), `documents found: ${docs.join(', ')}`);
    let checked = 0;
    const wrong: string[] = [];
    for (const doc of docs) {
      for (const ref of extractReferences(doc, readFileSync(join(repoRoot, doc), 'utf8'))) {
        checked++;
        const problem = problemOf(ref, tracked, repoRoot);
        if (problem !== undefined) wrong.push(`${doc}:${ref.line}: ${ref.kind === 'link' ? `link ${ref.text}` : `\`${ref.text}\``} ${problem}`);
      }
    }
    assert.ok(checked > 300, `only ${checked} references found`);
    assert.deepEqual(wrong, [], `references to nothing (correct the document, or see the rules in tools/doc-references.ts):\n${wrong.join('\n')}`);
  });
});
