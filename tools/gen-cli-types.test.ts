import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { it } from 'node:test';
import { generate, generatedPath } from './gen-cli-types.js';

it('the CLI\'s generated API types match control\'s OpenAPI document (run npm run gen:cli-types after changing it)', async () => {
  assert.equal(readFileSync(generatedPath, 'utf8'), await generate());
});
