// Writes services/control/openapi.json from the admin API's schemas (npm run gen:openapi).
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { openApiDocument } from '../services/control/src/openapi.js';
import { repoRoot } from './stack/paths.js';

const path = join(repoRoot, 'services/control/openapi.json');
writeFileSync(path, `${JSON.stringify(openApiDocument(), null, 2)}\n`);
console.log(`wrote ${path}`);
