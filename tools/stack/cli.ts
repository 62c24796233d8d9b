// npm run stack -- fetch [--update-lock] | up [--brokers N] [--kafka-port 9092] [--registry-port 8085] [--secure [--prefix switchyard.]]
//   fetch: download and verify the artifacts only.
//   up:    run Kafka (one broker, or a cluster of N) and the registry in the foreground (data in
//          .switchyard/), until Ctrl-C. --secure: one broker on SASL_SSL with ACLs for the programs
//          of the topic prefix (default $SWITCHYARD_TOPIC_PREFIX, else switchyard.), data and client
//          settings in .switchyard/secure/ (stack/secure.ts).
// Either stops what it started on Ctrl-C, SIGTERM, SIGHUP, a failure, or npm going away (shutdown.ts).
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { ensureArtifacts } from './artifacts.js';
import { kafkaAddresses, parseBrokers } from './layout.js';
import { repoRoot } from './paths.js';
import { connectionSummary } from './secure.js';
import { installShutdown } from './shutdown.js';
import { startStack, type Stack } from './stack.js';

const { positionals, values } = parseArgs({ allowPositionals: true, options: {
  'update-lock': { type: 'boolean', default: false },
  brokers: { type: 'string' },
  'kafka-port': { type: 'string', default: '9092' },
  'registry-port': { type: 'string', default: '8085' },
  secure: { type: 'boolean', default: false },
  prefix: { type: 'string' },
} });
const log = (line: string) => console.log(line);
const command = positionals[0] ?? 'up';
// `up` ends with Ctrl-C: exit 0 after a signal, as `fetch` would not.
const shutdown = installShutdown({ log, ...(command === 'up' ? { signalExitCode: () => 0 } : {}) });

if (command === 'fetch') {
  await ensureArtifacts({ log, updateLock: values['update-lock'] });
  log('artifacts ready');
  await shutdown.exit(0);
} else if (command === 'up') {
  let brokers: number;
  try { brokers = parseBrokers(values.brokers); } catch (err) { console.error((err as Error).message); process.exit(2); }
  const prefix = values.prefix ?? (process.env.SWITCHYARD_TOPIC_PREFIX || 'switchyard.');
  let stack: Stack | undefined;
  shutdown.onStop('the stack', () => stack?.stop());
  stack = await startStack({
    dir: join(repoRoot, '.switchyard', values.secure ? 'secure' : ''), kafka: kafkaAddresses(brokers, Number(values['kafka-port'])), registryPort: Number(values['registry-port']), log,
    ...(values.secure ? { secure: { prefix } } : {}),
  });
  if (stack.security) for (const line of connectionSummary(stack.security, stack.brokers)) log(line);
  log(`stack up: KAFKA_BROKERS=${stack.brokers} SCHEMA_REGISTRY_URL=${stack.registryUrl} (Ctrl-C stops)`);
  setInterval(() => undefined, 1 << 30);
} else {
  console.error(`unknown command ${command}; use fetch or up`);
  process.exit(2);
}
