// npm run stack -- fetch [--update-lock] | up [--brokers N] [--kafka-port 9092] [--registry-port 8085]
//   fetch: download and verify the artifacts only.
//   up:    run Kafka (one broker, or a cluster of N) and the registry in the foreground (data in
//          .switchyard/), until Ctrl-C.
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { ensureArtifacts } from './artifacts.js';
import { kafkaAddresses, parseBrokers } from './layout.js';
import { repoRoot } from './paths.js';
import { startStack } from './stack.js';

const { positionals, values } = parseArgs({ allowPositionals: true, options: {
  'update-lock': { type: 'boolean', default: false },
  brokers: { type: 'string' },
  'kafka-port': { type: 'string', default: '9092' },
  'registry-port': { type: 'string', default: '8085' },
} });
const log = (line: string) => console.log(line);
const command = positionals[0] ?? 'up';

if (command === 'fetch') {
  await ensureArtifacts({ log, updateLock: values['update-lock'] });
  log('artifacts ready');
} else if (command === 'up') {
  let brokers: number;
  try { brokers = parseBrokers(values.brokers); } catch (err) { console.error((err as Error).message); process.exit(2); }
  const stack = await startStack({ dir: join(repoRoot, '.switchyard'), kafka: kafkaAddresses(brokers, Number(values['kafka-port'])), registryPort: Number(values['registry-port']), log });
  log(`stack up: KAFKA_BROKERS=${stack.brokers} SCHEMA_REGISTRY_URL=${stack.registryUrl} (Ctrl-C stops)`);
  const stop = () => { void stack.stop().then(() => process.exit(0)); };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  setInterval(() => undefined, 1 << 30);
} else {
  console.error(`unknown command ${command}; use fetch or up`);
  process.exit(2);
}
