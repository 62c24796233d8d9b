// npm run compose -- up [--project switchyard] [--demo] [--build] | down [--project switchyard]
//   up:   docker-compose.yml under podman-compose with the images made on this machine
//         (deploy/podman/compose.images.yml), honouring depends_on conditions; --build first runs
//         `npm run image -- --stack`; --demo also starts the demo traffic.
//   down: removes the project's containers, volumes and network.
// `up` interrupted (SIGINT, SIGTERM, SIGHUP, npm going away) or failed takes down what it started
// (as `down` does) and stops the podman processes it ran (tools/stack/shutdown.ts); once it has
// printed `up`, the containers run on their own until `down`.
import { parseArgs } from 'node:util';
import { composeDown, composeUp, defaultServices, leftovers, readCompose } from './compose.js';
import { buildSwitchyard, ensureImages } from './images.js';
import { descendants, terminate } from '../stack/process.js';
import { installShutdown } from '../stack/shutdown.js';

const { positionals, values } = parseArgs({ allowPositionals: true, options: {
  project: { type: 'string', default: 'switchyard' },
  demo: { type: 'boolean', default: false },
  build: { type: 'boolean', default: false },
} });
const log = (line: string) => console.log(line);
const project = values.project;
// Removing a project stops its containers with a 30 s timeout each (composeDown).
const shutdown = installShutdown({ log, graceMs: 60_000 });

try {
  if (positionals[0] === 'up') {
    if (values.build) {
      await buildSwitchyard(log);
      await ensureImages(['kafka', 'registry', 'curl', 'prometheus'], log);
    }
    const services = [...defaultServices(readCompose()), ...(values.demo ? ['traffic'] : [])];
    const rollBack = shutdown.onStop(`project ${project}`, async () => {
      // The podman-compose still starting a container first, or it would start one after the down.
      await terminate(descendants(), 10_000);
      log(`taking project ${project} down`);
      await composeDown(project);
    });
    await composeUp({ project, services, log });
    rollBack();
    log([
      `up: project ${project}`,
      '  tracking API  http://localhost:8080      admin API  http://localhost:8081 (token: SWITCHYARD_ADMIN_TOKEN, default compose-demo-admin-token)',
      '  Prometheus    http://localhost:9090      registry   http://localhost:8085/apis/ccompat/v7',
      '  Kafka for host clients  localhost:9094',
      `  receiver log  podman logs -f ${project}_receiver_1        stop: npm run compose -- down`,
    ].join('\n'));
  } else if (positionals[0] === 'down') {
    await composeDown(project);
    const left = await leftovers(project);
    if (left.length) throw new Error(`left behind: ${left.join(', ')}`);
    log(`down: nothing of project ${project} is left`);
  } else {
    console.error('usage: npm run compose -- up [--project NAME] [--demo] [--build] | down [--project NAME]');
    process.exit(2);
  }
} catch (err) {
  if (!shutdown.stopping) console.error(`compose ${positionals[0]} failed: ${(err as Error).message}`);
  await shutdown.exit(1);
}
await shutdown.exit(0);
