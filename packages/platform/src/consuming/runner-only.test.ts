// Code consumes through the consumer runner (consumer-runner.ts) and nothing else: no source file
// under services/, and none of the platform library outside the kafkajs adapter, imports a kafkajs
// consumer, its batches or its config, or listens to a kafkajs consumer event. The kafkajs consumer
// lives in the adapter: kafka/kafkajs-consumer.ts over kafka/client.ts, kafka/access-guard.ts and
// the corrections in kafkajs/.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, posix, relative, sep } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', '..');

/** The kafkajs adapter: the only files that may drive a kafkajs consumer (and their own tests). */
const ADAPTER = [/^packages\/platform\/src\/kafkajs\//, /^packages\/platform\/src\/kafka\/(?:client|kafkajs-consumer|access-guard)(?:\.test)?\.ts$/, /consuming\/runner-only\.test\.ts$/];

/** Names a consuming service has no business with: the runner and ConsumerClient replace them. */
const CONSUMER_NAMES = new Set(['Consumer', 'ConsumerConfig', 'ConsumerEvents', 'EachBatchPayload', 'EachMessagePayload', 'Batch', 'createConsumer', 'beforeRejoining']);
/** An import (type or value): the names and where from. */
const IMPORT = /import\s+(?:type\s+)?\{([^}]*)\}\s+from\s+'([^']+)'/g;
/** The kafkajs client modules of the platform, as a path from the repository's root. */
const CLIENT_MODULE = /^packages\/platform\/src\/(?:kafka\/client|kafkajs\/[^/]+)$/;
/** A kafkajs consumer event, as `consumer.events.X` names it. */
const KAFKAJS_EVENT = /\.events\.(?:GROUP_JOIN|HEARTBEAT|FETCH|FETCH_START|START_BATCH_PROCESS|END_BATCH_PROCESS|CRASH|REBALANCING|STOP|DISCONNECT|CONNECT|REQUEST)\b/;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    if (entry.name === 'node_modules' || entry.name === 'dist' || entry.name.startsWith('.')) return [];
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

/** Where an import specifier leads, from the repository's root, without its extension. */
function importedModule(file: string, specifier: string): string {
  const path = specifier.startsWith('@switchyard/platform/') ? `packages/platform/src/${specifier.slice('@switchyard/platform/'.length)}`
    : specifier.startsWith('.') ? posix.join(posix.dirname(file), specifier) : specifier;
  return path.replace(/\.(?:js|ts)$/, '');
}

/** What a file (a path from the repository's root) does that only the adapter may: each as `file: what`. */
export function consumerUses(file: string, text: string): string[] {
  const found: string[] = [];
  for (const match of text.matchAll(IMPORT)) {
    if (!CLIENT_MODULE.test(importedModule(file, match[2]!))) continue;
    const names = match[1]!.split(',').map((n) => n.replace(/^\s*type\s+/, '').split(/\s+as\s+/)[0]!.trim()).filter(Boolean);
    for (const name of names) if (CONSUMER_NAMES.has(name)) found.push(`${file}: imports ${name}`);
  }
  text.split('\n').forEach((line, i) => { if (KAFKAJS_EVENT.test(line)) found.push(`${file}:${i + 1}: ${line.trim()}`); });
  return found;
}

describe('code consumes only through the consumer runner', () => {
  it('finds a kafkajs consumer type, its factory and its events, and not the runner or producers', () => {
    assert.deepEqual(consumerUses('a.ts', "import { createConsumer, type Kafka } from '@switchyard/platform/kafka/client';"), ['a.ts: imports createConsumer']);
    assert.deepEqual(consumerUses('a.ts', "import type {\n  Consumer,\n  Producer,\n} from '@switchyard/platform/kafka/client';"), ['a.ts: imports Consumer']);
    assert.deepEqual(consumerUses('a.ts', "import { beforeRejoining } from '@switchyard/platform/kafkajs/index';"), ['a.ts: imports beforeRejoining']);
    assert.deepEqual(consumerUses('a.ts', 'consumer.on(consumer.events.GROUP_JOIN, () => {});'), ['a.ts:1: consumer.on(consumer.events.GROUP_JOIN, () => {});']);
    assert.deepEqual(consumerUses('a.ts', "import { ConsumerRunner } from '@switchyard/platform/consuming/consumer-runner';\nimport { createProducer, type Producer } from '@switchyard/platform/kafka/client';"), []);
  });

  it('follows relative imports to the client modules and ignores other modules of the same name', () => {
    assert.deepEqual(consumerUses('packages/platform/src/holds/a.ts', "import { createConsumer } from '../kafka/client.js';"), ['packages/platform/src/holds/a.ts: imports createConsumer']);
    assert.deepEqual(consumerUses('packages/platform/src/kafka/a.ts', "import type { Consumer } from './client.js';"), ['packages/platform/src/kafka/a.ts: imports Consumer']);
    assert.deepEqual(consumerUses('packages/platform/src/registry/a.ts', "import type { Consumer } from './client.js';"), []);
  });

  it('no file under services/ or in the platform library outside the adapter uses a kafkajs consumer', () => {
    const files = [...sourceFiles(join(root, 'services')), ...sourceFiles(join(root, 'packages', 'platform', 'src'))]
      .map((f) => relative(root, f).split(sep).join('/'))
      .filter((f) => !ADAPTER.some((pattern) => pattern.test(f)));
    assert.ok(files.length > 200, `scanned services/ and packages/platform/src (${files.length} files)`);
    const offenders = files.flatMap((f) => consumerUses(f, readFileSync(join(root, f), 'utf8')));
    assert.deepEqual(offenders, [], `consume through ConsumerRunner over a ConsumerClient (kafka/kafkajs-consumer.ts):\n${offenders.join('\n')}`);
  });
});
