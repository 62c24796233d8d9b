// Services consume through the consumer runner (consumer-runner.ts) and nothing else: no service
// source file, test or not, imports a kafkajs consumer, its batches or its config, or listens to a
// kafkajs consumer event. The kafkajs consumer lives in one adapter (kafka/kafkajs-consumer.ts).
// The files in NOT_YET_ON_THE_RUNNER still drive a kafkajs consumer themselves; the list may only
// shrink (a file on it that no longer offends fails the test too).
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', '..');

/** Consumers not moved onto the runner yet: audiences' and control's live tail. */
const NOT_YET_ON_THE_RUNNER = new Set([
  'services/audiences/src/audience-processor.ts',
  'services/audiences/src/changelog.ts',
  'services/audiences/src/main.ts',
  'services/control/src/live-tail.ts',
]);

/** Names a consuming service has no business with: the runner and ConsumerClient replace them. */
const CONSUMER_NAMES = new Set(['Consumer', 'ConsumerConfig', 'ConsumerEvents', 'EachBatchPayload', 'EachMessagePayload', 'Batch', 'createConsumer', 'beforeRejoining']);
/** An import (type or value) from the kafkajs client modules of the platform. */
const CLIENT_IMPORT = /import\s+(?:type\s+)?\{([^}]*)\}\s+from\s+'@switchyard\/platform\/(?:kafka\/client|kafkajs\/[^']*)'/g;
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

/** What a file does that only the adapter may: each as `file: what`. */
export function consumerUses(file: string, text: string): string[] {
  const found: string[] = [];
  for (const match of text.matchAll(CLIENT_IMPORT)) {
    const names = match[1]!.split(',').map((n) => n.replace(/^\s*type\s+/, '').split(/\s+as\s+/)[0]!.trim()).filter(Boolean);
    for (const name of names) if (CONSUMER_NAMES.has(name)) found.push(`${file}: imports ${name}`);
  }
  text.split('\n').forEach((line, i) => { if (KAFKAJS_EVENT.test(line)) found.push(`${file}:${i + 1}: ${line.trim()}`); });
  return found;
}

describe('services consume only through the consumer runner', () => {
  it('finds a kafkajs consumer type, its factory and its events, and not the runner or producers', () => {
    assert.deepEqual(consumerUses('a.ts', "import { createConsumer, type Kafka } from '@switchyard/platform/kafka/client';"), ['a.ts: imports createConsumer']);
    assert.deepEqual(consumerUses('a.ts', "import type {\n  Consumer,\n  Producer,\n} from '@switchyard/platform/kafka/client';"), ['a.ts: imports Consumer']);
    assert.deepEqual(consumerUses('a.ts', "import { beforeRejoining } from '@switchyard/platform/kafkajs/index';"), ['a.ts: imports beforeRejoining']);
    assert.deepEqual(consumerUses('a.ts', 'consumer.on(consumer.events.GROUP_JOIN, () => {});'), ['a.ts:1: consumer.on(consumer.events.GROUP_JOIN, () => {});']);
    assert.deepEqual(consumerUses('a.ts', "import { ConsumerRunner } from '@switchyard/platform/consuming/consumer-runner';\nimport { createProducer, type Producer } from '@switchyard/platform/kafka/client';"), []);
  });

  it('no file under services/ uses a kafkajs consumer, but those not moved yet', () => {
    const files = sourceFiles(join(root, 'services')).map((f) => relative(root, f).split(sep).join('/'));
    assert.ok(files.length > 50, `scanned services/ (${files.length} files)`);
    const uses = new Map(files.map((f) => [f, consumerUses(f, readFileSync(join(root, f), 'utf8'))]));
    const offenders = [...uses].filter(([f]) => !NOT_YET_ON_THE_RUNNER.has(f)).flatMap(([, found]) => found);
    assert.deepEqual(offenders, [], `consume through ConsumerRunner over a ConsumerClient (kafka/kafkajs-consumer.ts):\n${offenders.join('\n')}`);
    const moved = [...NOT_YET_ON_THE_RUNNER].filter((f) => !uses.get(f)?.length);
    assert.deepEqual(moved, [], 'on the runner now (or gone): take them off NOT_YET_ON_THE_RUNNER');
  });
});
