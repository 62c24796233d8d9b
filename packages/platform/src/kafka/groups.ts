/**
 * Every consumer group and transactional id Switchyard's services use, named in one place: the
 * services name theirs through these functions, and the ACL table (`acls.ts`) grants exactly
 * these, so renaming a group cannot leave a secured cluster refusing it. Pure.
 */

/** The long-lived consumer groups, one per reading stage (instances of a stage share it). */
export function groupIds(prefix: string) {
  return {
    fanout: `${prefix}fanout`,
    /** Fan-out instances follow the replays topic in this group; the owner of its one partition runs the replays. */
    fanoutReplays: `${prefix}fanout-replays`,
    /** Delivery with DELIVERY_READS=all or main. */
    delivery: `${prefix}delivery`,
    /** Delivery with DELIVERY_READS=retries. */
    deliveryRetries: `${prefix}delivery-retries`,
    audiences: `${prefix}audiences`,
  };
}

/**
 * The prefixes of throwaway groups: each member makes a group of its own with a random suffix.
 * These carry the topic prefix; the topic followers' and the live feed's (below) start with
 * `switchyard.` whatever the prefix, as they always have.
 */
export function throwawayGroupPrefixes(prefix: string) {
  return {
    /** A replay reads the ingest topic in `<prefix>replay-<replay id>-<uuid>`. */
    replayReader: `${prefix}replay-`,
    /** Audiences restore a partition's state from the changelog in `<prefix>audiences-restore.<uuid>`. */
    audiencesRestore: `${prefix}audiences-restore.`,
  };
}

/** The debugger's live feed reads the ingest topic in `switchyard.live-tail.<uuid>`. */
export const LIVE_TAIL_GROUP_PREFIX = 'switchyard.live-tail.';

/** The groups of the topic followers (`followTopic`), by label, and the services that run each. */
export const FOLLOWERS = {
  'dead-letter-index': ['control'],
  'trace-index': ['control'],
  'usage-index': ['control'],
  'replay-index': ['control'],
  'destination-state': ['fanout', 'delivery', 'control'],
} as const;
export type FollowerLabel = keyof typeof FOLLOWERS;

/** A topic follower's group: `switchyard.<label>.<uuid>`. */
export const followerGroupPrefix = (label: FollowerLabel): string => `switchyard.${label}.`;

/** The exactly-once stages, whose input partitions each have a transactional id. */
export type TransactionalStage = 'fanout' | 'audiences';

/** The transactional id of one input partition of an exactly-once stage: `<prefix><stage>-p<N>`. */
export const partitionTransactionalId = (prefix: string, stage: TransactionalStage, partition: number): string => `${prefixOfPartitionIds(prefix, stage)}${partition}`;

/** What every partition transactional id of a stage starts with. */
export const prefixOfPartitionIds = (prefix: string, stage: TransactionalStage): string => `${prefix}${stage}-p`;

/** A replay's transactional id: whichever fan-out instance runs it fences the one that ran it before. */
export const replayTransactionalId = (prefix: string, replayId: string): string => `${prefixOfReplayIds(prefix)}${replayId}`;

export const prefixOfReplayIds = (prefix: string): string => `${prefix}replay-`;
