/**
 * The Kafka ACLs of a secured cluster, as one table: for a topic prefix, each principal Switchyard
 * runs as and exactly what it may do. Worked out from the code: the topics each service reads and
 * writes (`topics.ts`, ARCHITECTURE.md "Topics"), its consumer groups and transactional ids
 * (`groups.ts`). The local secured stack creates these (tools/stack/secure.ts), `switchyard
 * acls` prints them, deploy/README.md shows them; test/secure-stack.test.ts runs the pipeline under
 * them on a broker that refuses everything else. Pure: no Kafka client here.
 *
 * What each grant implies on Kafka 3.x (so the table lists no more): Read, Write and Alter imply
 * Describe; AlterConfigs implies DescribeConfigs; Write on any topic lets an idempotent producer
 * in without IdempotentWrite on the cluster (KIP-679); Read on a group covers joining it,
 * committing and fetching its offsets (admin offset reads need Describe, implied); Write on a
 * transactional id covers finding its coordinator and every transaction request (the records'
 * topics need Write, the offsets' group and topic Read).
 */
import { FOLLOWERS, followerGroupPrefix, groupIds, LIVE_TAIL_GROUP_PREFIX, prefixOfPartitionIds, prefixOfReplayIds, throwawayGroupPrefixes, type FollowerLabel } from './groups.js';
import { retryTopicPrefix, topicNames } from './topics.js';

export type AclOperation = 'Read' | 'Write' | 'Create' | 'Describe' | 'Alter' | 'DescribeConfigs' | 'AlterConfigs';
export type AclResourceType = 'Topic' | 'Group' | 'TransactionalId' | 'Cluster';
export type AclPatternType = 'Literal' | 'Prefixed';

/** Operations allowed on one resource (a name, or every name starting with it). */
export interface AclGrant {
  resourceType: AclResourceType;
  patternType: AclPatternType;
  name: string;
  operations: readonly AclOperation[];
  /** What the service does that needs it. */
  why: string;
}

/**
 * Who connects: the six programs of services/, the schema registry (KafkaSQL storage), and an
 * application producing straight to the ingest topic (examples/direct-producer.ts).
 */
export const ACL_ROLES = ['setup', 'ingest', 'fanout', 'delivery', 'audiences', 'control', 'registry', 'producer'] as const;
export type AclRole = (typeof ACL_ROLES)[number];

export interface PrincipalAcls {
  role: AclRole;
  /** The SASL user name: `switchyard-<role>`. */
  user: string;
  /** `User:<user>`, as Kafka names it in ACLs. */
  principal: string;
  grants: AclGrant[];
}

/** The registry's topics and the prefix of its consumer group (tools/stack/registry.ts sets both). */
export interface RegistryKafkaNames {
  topics: readonly string[];
  groupPrefix: string;
}

/** Apicurio Registry 3's KafkaSQL topics (journal, snapshots, events) and the group prefix the stack gives it. */
export const REGISTRY_KAFKA_NAMES: RegistryKafkaNames = {
  topics: ['kafkasql-journal', 'kafkasql-snapshots', 'registry-events'],
  groupPrefix: 'switchyard-registry-',
};

export interface AclSettings {
  /** SWITCHYARD_TOPIC_PREFIX of the deployment. */
  prefix: string;
  registry?: RegistryKafkaNames;
}

export const userOf = (role: AclRole): string => `switchyard-${role}`;

const grant = (resourceType: AclResourceType, patternType: AclPatternType, name: string, operations: readonly AclOperation[], why: string): AclGrant =>
  ({ resourceType, patternType, name, operations, why });
const topic = (name: string, operations: readonly AclOperation[], why: string) => grant('Topic', 'Literal', name, operations, why);
const group = (name: string, why: string) => grant('Group', 'Literal', name, ['Read'], why);
const groupPrefix = (name: string, why: string) => grant('Group', 'Prefixed', name, ['Read'], why);
const transactionalIds = (name: string, why: string) => grant('TransactionalId', 'Prefixed', name, ['Write'], why);

const followers = (role: AclRole): AclGrant[] => (Object.entries(FOLLOWERS) as [FollowerLabel, readonly string[]][])
  .filter(([, roles]) => roles.includes(role))
  .map(([label]) => groupPrefix(followerGroupPrefix(label), `the ${label} follower's throwaway groups`));

/** Every principal and its grants for one topic prefix, in ACL_ROLES order. */
export function aclTable({ prefix, registry = REGISTRY_KAFKA_NAMES }: AclSettings): PrincipalAcls[] {
  const t = topicNames(prefix);
  const g = groupIds(prefix);
  const throwaway = throwawayGroupPrefixes(prefix);
  const config = topic(t.config, ['Read'], 'the config view (read with no group)');
  const grants: Record<AclRole, AclGrant[]> = {
    setup: [
      grant('Topic', 'Prefixed', prefix, ['Create', 'Describe', 'Alter', 'DescribeConfigs', 'AlterConfigs'],
        'creates missing topics, grows partitions, restores drifted configs (ensureTopics)'),
    ],
    ingest: [
      topic(t.ingest, ['Write'], 'accepted calls'),
      topic(t.invalidEvents, ['Write'], 'calls breaking a rule'),
      topic(t.usage, ['Write'], 'usage totals'),
      config,
    ],
    fanout: [
      topic(t.ingest, ['Read'], 'its input (group), replays (throwaway groups)'),
      config,
      topic(t.delivery, ['Write'], 'delivery tasks (transactional)'),
      topic(t.retry(1), ['Write'], 'ranges of held tasks (first retry tier, transactional)'),
      topic(t.invalidEvents, ['Write'], 'undecodable records, direct records breaking a rule'),
      topic(t.deliveryAttempts, ['Write'], 'one trace record per batch (transactional)'),
      topic(t.usage, ['Write'], 'usage totals'),
      topic(t.replays, ['Read', 'Write'], 'replay requests; their progress (transactional)'),
      topic(t.destinationState, ['Read'], 'destinations delivery finds refusing'),
      topic(t.fanoutPositions, ['Read', 'Write'], 'its position per ingest partition (transactional), read back after fencing in'),
      group(g.fanout, 'its consumer group; offsets in its transactions and behind them'),
      group(g.fanoutReplays, 'the replays topic, followed by every instance'),
      groupPrefix(throwaway.replayReader, 'a replay reading the ingest topic'),
      ...followers('fanout'),
      transactionalIds(prefixOfPartitionIds(prefix, 'fanout'), 'one transactional id per ingest partition'),
      transactionalIds(prefixOfReplayIds(prefix), 'one transactional id per replay'),
    ],
    delivery: [
      topic(t.delivery, ['Read'], 'its input (group); deferred ranges read back (no group)'),
      grant('Topic', 'Prefixed', retryTopicPrefix(prefix), ['Read', 'Write'], 'the retry tiers (as many as SWITCHYARD_RETRY_TIERS)'),
      config,
      topic(t.ingest, ['Read'], "ranges fan-out held, read back (no group)"),
      topic(t.deadLetter, ['Write'], 'tasks that will not be retried'),
      topic(t.invalidEvents, ['Write'], 'undecodable tasks'),
      topic(t.deliveryAttempts, ['Write'], 'attempt records (best-effort)'),
      topic(t.destinationState, ['Read', 'Write'], 'destinations refusing or answering again'),
      group(g.delivery, 'its consumer group (DELIVERY_READS all or main); offsets read back by its admin client'),
      group(g.deliveryRetries, 'its consumer group with DELIVERY_READS=retries'),
      ...followers('delivery'),
    ],
    audiences: [
      topic(t.ingest, ['Read', 'Write'], 'its input (group); identify calls (transactional)'),
      config,
      topic(t.audiencesState, ['Read', 'Write'], 'the per-user state changelog (transactional), restored per partition'),
      group(g.audiences, 'its consumer group; offsets in its transactions'),
      groupPrefix(throwaway.audiencesRestore, 'restoring a partition from the changelog'),
      transactionalIds(prefixOfPartitionIds(prefix, 'audiences'), 'one transactional id per ingest partition'),
    ],
    control: [
      topic(t.config, ['Read', 'Write'], 'sources, destinations, audiences, computed traits'),
      topic(t.ingest, ['Read', 'Write'], 'the live feed (throwaway groups); deletion requests'),
      topic(t.delivery, ['Write'], 'dead-letter replays'),
      topic(t.deadLetter, ['Read'], 'the dead-letter index'),
      topic(t.deliveryAttempts, ['Read'], 'the trace index'),
      topic(t.usage, ['Read'], 'the usage index'),
      topic(t.replays, ['Read', 'Write'], 'replay requests and cancellations; the replay index'),
      topic(t.destinationState, ['Read'], 'failing destinations, to disable and notify'),
      groupPrefix(LIVE_TAIL_GROUP_PREFIX, "the debugger's live feed"),
      ...followers('control'),
    ],
    registry: [
      ...registry.topics.map((name) => topic(name, ['Create', 'Read', 'Write'], 'its KafkaSQL storage (created at its first start)')),
      groupPrefix(registry.groupPrefix, 'each registry instance reads the journal in a group of its own'),
    ],
    producer: [
      topic(t.ingest, ['Write'], 'calls produced straight to the ingest topic (docs/tracking-api.md)'),
    ],
  };
  return ACL_ROLES.map((role) => ({ role, user: userOf(role), principal: `User:${userOf(role)}`, grants: grants[role] }));
}

/** One ACL binding: an allowed operation on a resource pattern for a principal, from any host. */
export interface AclBinding {
  principal: string;
  resourceType: AclResourceType;
  patternType: AclPatternType;
  name: string;
  operation: AclOperation;
}

/** The table as Kafka stores it: one binding per operation. */
export function aclBindings(table: readonly PrincipalAcls[]): AclBinding[] {
  return table.flatMap(({ principal, grants }) => grants.flatMap(({ resourceType, patternType, name, operations }) =>
    operations.map((operation) => ({ principal, resourceType, patternType, name, operation }))));
}

const shellQuote = (s: string) => (/^[\w.:@%+=/-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`);
const resourceFlag: Record<AclResourceType, string> = { Topic: '--topic', Group: '--group', TransactionalId: '--transactional-id', Cluster: '--cluster' };

/**
 * The same grants as `kafka-acls.sh` command lines (Kafka's own tool), one per grant, for an
 * operator applying them by hand. `bootstrap` and `commandConfig` (an admin client's properties
 * file) are written as given, so they may be shell variables.
 */
export function kafkaAclsCommands(table: readonly PrincipalAcls[], { bootstrap = '"$KAFKA_BROKERS"', commandConfig = '"$KAFKA_ADMIN_CONFIG"' } = {}): string[] {
  return table.flatMap(({ principal, grants }) => grants.map(({ resourceType, patternType, name, operations }) => [
    'kafka-acls.sh', '--bootstrap-server', bootstrap, '--command-config', commandConfig, '--add', '--allow-principal', shellQuote(principal),
    ...operations.flatMap((op) => ['--operation', op]),
    resourceFlag[resourceType], ...(resourceType === 'Cluster' ? [] : [shellQuote(name)]),
    ...(patternType === 'Prefixed' ? ['--resource-pattern-type', 'prefixed'] : []),
  ].join(' ')));
}

/** What an allowed operation lets in besides itself (Kafka's implications, above). */
const IMPLIED: Partial<Record<AclOperation, readonly AclOperation[]>> = {
  Read: ['Describe'], Write: ['Describe'], Alter: ['Describe'], AlterConfigs: ['DescribeConfigs'],
};

/** Whether grants allow an operation on a resource, matching as Kafka does (a literal name, or a prefix). */
export function isAllowed(grants: readonly AclGrant[], resourceType: AclResourceType, name: string, operation: AclOperation): boolean {
  return grants.some((g) => g.resourceType === resourceType
    && (g.patternType === 'Literal' ? g.name === name : name.startsWith(g.name))
    && g.operations.some((op) => op === operation || IMPLIED[op]?.includes(operation)));
}
