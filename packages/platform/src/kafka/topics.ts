/**
 * Every topic of the pipeline: its name (one configurable prefix), partitions and settings. The
 * one place to change a topic; `ensureTopics` applies these declarations.
 */
export interface TopicDeclaration {
  name: string;
  partitions: number;
  /** Topic-level configs (cleanup.policy, retention.ms...). */
  configs: Record<string, string>;
  purpose: string;
}

export interface TopicSettings {
  prefix: string;
  /** Partitions of the high-volume topics (ingest, delivery, retry tiers). */
  partitions: number;
  /** Number of retry tiers (each has its own topic). */
  retryTiers: number;
}

const DAY_MS = 86_400_000;

/**
 * Topic configs that follow from the replication factor: with three copies or more, an acks=all
 * write needs two of them (`min.insync.replicas=2`), so one broker may be down without stopping
 * writes and an acknowledged write survives losing any one broker. Below three the broker's own
 * default applies (with one or two copies, requiring two would stop writes whenever one is down).
 */
export function replicationConfigs(replicationFactor: number): Record<string, string> {
  return replicationFactor >= 3 ? { 'min.insync.replicas': '2' } : {};
}

/** What every retry tier's topic name starts with (`<prefix>delivery.retry.<tier>`). */
export const retryTopicPrefix = (prefix: string): string => `${prefix}delivery.retry.`;

export function topicNames(prefix: string) {
  return {
    ingest: `${prefix}ingest`,
    delivery: `${prefix}delivery`,
    retry: (tier: number) => `${retryTopicPrefix(prefix)}${tier}`,
    deadLetter: `${prefix}dead-letter`,
    invalidEvents: `${prefix}invalid-events`,
    config: `${prefix}config`,
    audiencesState: `${prefix}audiences-state`,
    deliveryAttempts: `${prefix}delivery-attempts`,
    usage: `${prefix}usage`,
    replays: `${prefix}replays`,
    destinationState: `${prefix}destination-state`,
    fanoutPositions: `${prefix}fanout-positions`,
  };
}

export type TopicNames = ReturnType<typeof topicNames>;

export function topicDeclarations({ prefix, partitions, retryTiers }: TopicSettings): TopicDeclaration[] {
  const names = topicNames(prefix);
  const delete7d = { 'cleanup.policy': 'delete', 'retention.ms': String(7 * DAY_MS) };
  return [
    { name: names.ingest, partitions, configs: delete7d, purpose: 'every accepted call, Avro (7 event types); key sourceId:userId' },
    { name: names.delivery, partitions, configs: delete7d, purpose: 'one delivery task per (event, webhooks destination); key destinationId:userId' },
    ...Array.from({ length: retryTiers }, (_, i) => ({
      name: names.retry(i + 1), partitions, configs: delete7d, purpose: `delivery tasks waiting for retry tier ${i + 1}`,
    })),
    { name: names.deadLetter, partitions: 1, configs: { 'cleanup.policy': 'delete', 'retention.ms': String(30 * DAY_MS) }, purpose: 'tasks that will not be retried, with the reason; replayable' },
    { name: names.invalidEvents, partitions: 1, configs: { 'cleanup.policy': 'delete', 'retention.ms': String(7 * DAY_MS) }, purpose: 'events refused by ingest and records no stage could decode' },
    { name: names.audiencesState, partitions, configs: { 'cleanup.policy': 'compact', 'min.compaction.lag.ms': '0', 'segment.ms': String(DAY_MS) }, purpose: "the audiences processor's per-user state (changelog), partitioned like ingest" },
    { name: names.deliveryAttempts, partitions, configs: delete7d, purpose: 'delivery attempts and fan-out decisions per message (best-effort observability: the trace API); key messageId' },
    // Compacted (latest running total per writer, source and day) and deleted after 400 days.
    { name: names.usage, partitions: 1, configs: { 'cleanup.policy': 'compact,delete', 'retention.ms': String(400 * DAY_MS), 'min.compaction.lag.ms': '0', 'segment.ms': String(DAY_MS / 24) }, purpose: 'calls per source per UTC day (accepted, rejected, filtered): running totals per writer' },
    // Replay requests (control) and their progress (the fan-out instance running them, written in
    // the transaction of the tasks): the latest per key. One partition: one fan-out instance runs them.
    { name: names.replays, partitions: 1, configs: { 'cleanup.policy': 'compact', 'min.compaction.lag.ms': '0', 'segment.ms': String(DAY_MS) }, purpose: 'time-range replays into one destination: requests and their progress, latest per key' },
    // Written by delivery, followed by fan-out: destinations refusing every request, whose tasks fan-out holds.
    { name: names.destinationState, partitions: 1, configs: { 'cleanup.policy': 'compact', 'min.compaction.lag.ms': '0', 'segment.ms': String(DAY_MS) }, purpose: 'destinations delivery finds refusing (every circuit open), latest per destination: fan-out holds their tasks' },
    // Fan-out's position on each ingest partition, written in the transaction of its tasks (one
    // partition per ingest partition, written only by that partition's transactional id).
    { name: names.fanoutPositions, partitions, configs: { 'cleanup.policy': 'compact', 'min.compaction.lag.ms': '0', 'segment.ms': String(DAY_MS) }, purpose: "fan-out's next ingest offset per ingest partition, committed with its tasks (the group offset follows, for lag)" },
    { name: names.config, partitions: 1, configs: { 'cleanup.policy': 'compact', 'min.compaction.lag.ms': '0', 'segment.ms': String(DAY_MS) }, purpose: 'sources and destinations, latest record per key; deletes are tombstones' },
  ];
}
