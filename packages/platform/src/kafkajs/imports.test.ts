// kafkajs is imported in one place: this folder, whose index.ts installs every correction before
// kafkajs loads. Any other source file of the repository that names a kafkajs module ('kafkajs' or
// 'kafkajs/…', in an import, a require or a dynamic import) fails here, for it could load kafkajs
// uncorrected, or keep a second kafkajs API surface to swap out later.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', '..');

/** Where a kafkajs module may be named, and why. */
const ALLOWED: ReadonlyArray<readonly [string, string]> = [
  ['packages/platform/src/kafkajs/', 'the corrections and the entry point that re-exports kafkajs'],
  ['examples/', 'examples written for users, who import kafkajs as an application would'],
];

const SOURCE_FILE = /\.[cm]?[jt]s$/;
/** A string literal that is exactly a kafkajs module specifier (the registry client, '@kafkajs/…', is another package). */
const KAFKAJS_MODULE = /(['"`])kafkajs(?:\/[^'"`\s]*)?\1/;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    if (entry.name === 'node_modules' || entry.name === 'dist' || entry.name.startsWith('.')) return [];
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return SOURCE_FILE.test(entry.name) ? [path] : [];
  });
}

describe('kafkajs is imported only through packages/platform/src/kafkajs/index.ts', () => {
  it('the pattern finds every form of a kafkajs import, and nothing else', () => {
    for (const line of ["import { Kafka } from 'kafkajs';", 'import type { Producer } from "kafkajs";', "export * from 'kafkajs';", "require('kafkajs/src/consumer/batch.js')", "await import('kafkajs')", "require.resolve(`kafkajs/src/errors`)"]) {
      assert.match(line, KAFKAJS_MODULE, line);
    }
    for (const line of ["import { SchemaRegistry } from '@kafkajs/confluent-schema-registry';", "import { Kafka } from '../kafkajs/index.js';", "'node_modules/kafkajs/package.json'", '// kafkajs retries a commit', "from 'kafkajs-fork'"]) {
      assert.doesNotMatch(line, KAFKAJS_MODULE, line);
    }
  });

  it('no source file outside the allowed places names a kafkajs module', () => {
    const files = sourceFiles(root);
    assert.ok(files.some((f) => f.endsWith(join('kafka', 'client.ts'))), `scanned the repository (${root})`);
    const offenders = files
      .map((f) => relative(root, f).split(sep).join('/'))
      .filter((f) => !ALLOWED.some(([prefix]) => f.startsWith(prefix)))
      .flatMap((f) => readFileSync(join(root, f), 'utf8').split('\n').flatMap((line, i) => (KAFKAJS_MODULE.test(line) ? [`${f}:${i + 1}: ${line.trim()}`] : [])));
    assert.deepEqual(offenders, [], `import kafkajs through packages/platform/src/kafkajs/index.ts instead:\n${offenders.join('\n')}`);
  });
});
