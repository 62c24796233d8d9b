// What the schema registry answers for a known schema id while it restarts (repro for the broker
// fault suite's "schema id N is not in the registry"; docs/internals/fanout.md, "When the schema
// registry does not answer"). Starts a broker and a registry of its own in a temporary directory,
// registers every schema, then restarts the registry three times while polling one id every 20 ms,
// and prints each run of identical answers.
//   node --conditions=source --import tsx tools/repro/registry-restart-probe.ts
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { AvroCodec } from '@switchyard/platform/codec/avro-codec';
import { ensureArtifacts } from '../stack/artifacts.js';
import { startKafka } from '../stack/kafka.js';
import { freePort } from '../stack/ports.js';
import { startRegistry } from '../stack/registry.js';

const dir = mkdtempSync(join(tmpdir(), 'switchyard-registry-probe-'));
const { kafkaLibs, registryJar } = await ensureArtifacts({ log: () => undefined });
const kafka = await startKafka({ libs: kafkaLibs, dir: join(dir, 'kafka'), port: await freePort(), controllerPort: await freePort(), heap: '512m' });
const opts = { jar: registryJar, dir: join(dir, 'registry'), port: await freePort(), brokers: kafka.brokers, heap: '384m' };
let registry = await startRegistry(opts);
try {
  const ids = await new AvroCodec({ registryUrl: registry.url }).register();
  const id = ids.get('io.switchyard.event.Track')!;
  for (let round = 1; round <= 3; round++) {
    await registry.stop();
    let polling = true;
    const answers: string[] = [];
    const poll = (async () => {
      while (polling) {
        try {
          const res = await fetch(`${registry.url}/schemas/ids/${id}`, { signal: AbortSignal.timeout(2000) });
          answers.push(String(res.status));
        } catch (err) {
          answers.push(((err as Error).cause as { code?: string } | undefined)?.code ?? (err as Error).name);
        }
        await sleep(20);
      }
    })();
    const t0 = Date.now();
    registry = await startRegistry(opts);
    await sleep(2000);
    polling = false;
    await poll;
    const runs: string[] = [];
    for (const a of answers) {
      const last = runs.at(-1);
      if (last?.startsWith(`${a} ×`)) runs[runs.length - 1] = `${a} × ${Number(last.split('× ')[1]) + 1}`;
      else runs.push(`${a} × 1`);
    }
    console.log(`round ${round}: ready after ${Date.now() - t0 - 2000} ms; answers for id ${id}: ${runs.join(', ')}`);
  }
} finally {
  await registry.stop();
  await kafka.stop();
  rmSync(dir, { recursive: true, force: true });
}
