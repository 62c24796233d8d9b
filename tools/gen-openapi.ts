// Writes each HTTP service's OpenAPI document into the repository (npm run gen:openapi).
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { openApiDocument as adminApi } from '../services/control/src/openapi.js';
import { openApiDocument as trackingApi } from '../services/ingest/src/openapi.js';
import { repoRoot } from './stack/paths.js';

for (const [service, document] of [['control', adminApi()], ['ingest', trackingApi()]] as const) {
  const path = join(repoRoot, 'services', service, 'openapi.json');
  writeFileSync(path, `${JSON.stringify(document, null, 2)}\n`);
  console.log(`wrote ${path}`);
}
