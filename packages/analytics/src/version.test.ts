import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { it } from 'node:test';
import { LIBRARY_NAME, LIBRARY_VERSION } from './version.js';

it('the library name and version sent in context.library are those of package.json', () => {
  const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { name: string; version: string };
  assert.deepEqual({ name: LIBRARY_NAME, version: LIBRARY_VERSION }, { name: pkg.name, version: pkg.version });
});
