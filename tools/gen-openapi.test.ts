import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { it } from 'node:test';
import { documents } from './gen-openapi.js';
import { repoRoot } from './stack/paths.js';

it('each kept openapi.json is the document its service serves (run npm run gen:openapi after changing one)', () => {
  for (const { path, text } of documents()) assert.equal(readFileSync(path, 'utf8'), text, relative(repoRoot, path));
});
