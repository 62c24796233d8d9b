// Entry point of the Switchyard container image: runs one service's built code in this process,
// chosen by the first argument or by SWITCHYARD_SERVICE:
//   docker run switchyard ingest        (Kubernetes: args: ["ingest"])
//   docker run -e SWITCHYARD_SERVICE=ingest switchyard
// The service itself handles SIGTERM (graceful shutdown), so no init wrapper is needed.
const SERVICES = ['setup', 'control', 'ingest', 'fanout', 'delivery', 'audiences'];

const arg = process.argv[2];
const name = arg && !arg.startsWith('-') ? arg : process.env.SWITCHYARD_SERVICE;

if (!name || !SERVICES.includes(name)) {
  process.stderr.write(
    `${name ? `unknown service "${name}"` : 'no service given'}\n` +
    `usage: start.mjs <${SERVICES.join('|')}>  (or set SWITCHYARD_SERVICE)\n`,
  );
  process.exit(2);
}

process.title = `switchyard-${name}`;
await import(new URL(`../../services/${name}/dist/main.js`, import.meta.url).href);
