// npm run image [-- --stack] [--rebuild]
//   Builds the Switchyard image (localhost/switchyard:<version>, also tagged switchyard:local for
//   docker-compose.yml) with podman from the project's Dockerfile, on a Node 20 base made on this
//   machine from Debian's archive and the npm registry, and prints its name and size.
//   --stack   also the images the compose stack runs: Kafka, the schema registry, curl, Prometheus.
//   --rebuild make the base images again even where they exist.
import { parseArgs } from 'node:util';
import { buildSwitchyard, ensureImages, imageNames, removeDanglingImages } from './images.js';
import { imageSize, megabytes } from './podman.js';

const { values } = parseArgs({ options: { stack: { type: 'boolean', default: false }, rebuild: { type: 'boolean', default: false } } });
const log = (line: string) => console.log(line);
const t0 = Date.now();

try {
  const built = [await buildSwitchyard(log, values.rebuild)];
  if (values.stack) {
    await ensureImages(['kafka', 'registry', 'curl', 'prometheus'], log, values.rebuild);
    built.push(imageNames.kafka, imageNames.registry, imageNames.curl, imageNames.prometheus);
  }
  await removeDanglingImages();
  log('');
  for (const name of built) log(`${name.padEnd(42)} ${megabytes(await imageSize(name)).padStart(8)}`);
  log(`done in ${((Date.now() - t0) / 1000).toFixed(0)} s`);
} catch (err) {
  console.error(`image build failed: ${(err as Error).message}`);
  process.exit(1);
}
