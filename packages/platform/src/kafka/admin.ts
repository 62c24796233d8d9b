import type { Admin } from '../kafkajs/index.js';
import type { Logger } from '../logger.js';
import { withRetries } from '../retry.js';
import { replicationConfigs, type TopicDeclaration } from './topics.js';

export interface EnsureTopicsResult {
  created: string[];
  partitionsAdded: string[];
  configsUpdated: string[];
}

// DescribeConfigs resource type for topics in the Kafka protocol.
const TOPIC_RESOURCE = 2;

/**
 * Makes the broker match the declarations: creates missing topics, adds partitions when a
 * declaration asks for more (never fewer: Kafka cannot shrink), and sets declared configs that
 * differ. Running it again changes nothing — so a retriable broker error (a just-created topic the
 * broker's metadata does not know yet: "This server does not host this topic-partition", seen on a
 * fresh KRaft broker with two setups at once) runs the whole step again, a few times.
 */
export async function ensureTopics(admin: Admin, declarations: TopicDeclaration[], logger?: Logger, replicationFactor = 1): Promise<EnsureTopicsResult> {
  return withRetries(() => ensureTopicsOnce(admin, declarations, logger, replicationFactor), {
    attempts: 5, delayMs: 300, retriable: isRetriable,
    onRetry: (err, attempt) => logger?.warn({ err, attempt }, 'creating topics failed; trying again'),
  });
}

/** kafkajs marks protocol errors retriable, and wraps some (retries exhausted, an aggregate) around them. */
function isRetriable(err: unknown): boolean {
  const e = err as { retriable?: boolean; errors?: unknown[]; originalError?: unknown } | undefined;
  if (!e) return false;
  return e.retriable === true || (e.originalError !== undefined && isRetriable(e.originalError))
    || (Array.isArray(e.errors) && e.errors.length > 0 && e.errors.every(isRetriable));
}

async function ensureTopicsOnce(admin: Admin, declarations: TopicDeclaration[], logger: Logger | undefined, replicationFactor: number): Promise<EnsureTopicsResult> {
  const result: EnsureTopicsResult = { created: [], partitionsAdded: [], configsUpdated: [] };
  const existing = new Set(await admin.listTopics());
  const missing = declarations.filter((d) => !existing.has(d.name));
  if (missing.length > 0) {
    await admin.createTopics({
      waitForLeaders: true,
      topics: missing.map((d) => ({
        topic: d.name,
        numPartitions: d.partitions,
        replicationFactor,
        configEntries: Object.entries({ ...d.configs, ...replicationConfigs(replicationFactor) }).map(([name, value]) => ({ name, value })),
      })),
    });
    result.created.push(...missing.map((d) => d.name));
  }

  const present = declarations.filter((d) => existing.has(d.name));
  if (present.length === 0) return log(result, logger);

  const metadata = await admin.fetchTopicMetadata({ topics: present.map((d) => d.name) });
  const partitionsOf = (name: string) => metadata.topics.find((t) => t.name === name)?.partitions ?? [];
  const grow = present.filter((d) => partitionsOf(d.name).length < d.partitions);
  if (grow.length > 0) {
    await admin.createPartitions({ topicPartitions: grow.map((d) => ({ topic: d.name, count: d.partitions })) });
    result.partitionsAdded.push(...grow.map((d) => d.name));
  }

  // An existing topic keeps its replication factor (changing it is a reassignment, an operator's
  // job); the configs that follow from it are those of the replicas it has, not of the setting.
  const withReplication = present.map((d) => ({ ...d, configs: { ...d.configs, ...replicationConfigs(partitionsOf(d.name)[0]?.replicas.length ?? 1) } }));
  const described = await admin.describeConfigs({
    includeSynonyms: false,
    resources: withReplication.map((d) => ({ type: TOPIC_RESOURCE, name: d.name, configNames: Object.keys(d.configs) })),
  });
  for (const decl of withReplication) {
    const entries = described.resources.find((r) => r.resourceName === decl.name)?.configEntries ?? [];
    const differs = Object.entries(decl.configs).some(([k, v]) => entries.find((e) => e.configName === k)?.configValue !== v);
    if (!differs) continue;
    // Incremental alter is not in kafkajs; alterConfigs replaces the topic's overrides with exactly
    // the declared set, which is what a declaration means.
    await admin.alterConfigs({
      validateOnly: false,
      resources: [{ type: TOPIC_RESOURCE, name: decl.name, configEntries: Object.entries(decl.configs).map(([name, value]) => ({ name, value })) }],
    });
    result.configsUpdated.push(decl.name);
  }
  return log(result, logger);
}

function log(result: EnsureTopicsResult, logger?: Logger): EnsureTopicsResult {
  if (logger && (result.created.length || result.partitionsAdded.length || result.configsUpdated.length)) {
    logger.info(result, 'topics updated');
  }
  return result;
}

/** The partition count of each topic named, as the cluster's metadata has it now. */
export async function partitionCounts(admin: Admin, topics: string[]): Promise<Map<string, number>> {
  const metadata = await admin.fetchTopicMetadata({ topics });
  return new Map(metadata.topics.map((t) => [t.name, t.partitions.length]));
}
