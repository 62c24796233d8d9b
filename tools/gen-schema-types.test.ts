import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { it } from 'node:test';
import { generate, generatedPath } from './gen-schema-types.js';

it('the generated schema types match schemas/ (run npm run gen:types after changing an .avsc)', () => {
  assert.equal(readFileSync(generatedPath, 'utf8'), generate());
});
