// Writes each HTTP service's OpenAPI document into the repository (npm run gen:openapi).
// tools/gen-openapi.test.ts fails when a kept copy differs from the document the service serves.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openApiDocument as adminApi } from '../services/control/src/openapi.js';
import { openApiDocument as trackingApi } from '../services/ingest/src/openapi.js';
import { repoRoot } from './stack/paths.js';

/** Each service's kept copy and its text, as this tool writes it. */
export function documents(): Array<{ path: string; text: string }> {
  return ([['control', adminApi()], ['ingest', trackingApi()]] as const).map(([service, document]) => ({
    path: join(repoRoot, 'services', service, 'openapi.json'),
    text: `${JSON.stringify(document, null, 2)}\n`,
  }));
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  for (const { path, text } of documents()) {
    writeFileSync(path, text);
    console.log(`wrote ${path}`);
  }
}
