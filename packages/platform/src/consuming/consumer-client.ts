// What a consuming service needs of a Kafka consumer-group client, and nothing of the client that
// provides it: the consumer runner (consumer-runner.ts) and the services speak only this. The
// kafkajs client and its corrections sit behind it in one adapter (kafka/kafkajs-consumer.ts); a
// test plays the client with test-support/fake-consumer-client.ts, no broker involved.

/** Record headers as they arrive: a header may repeat; values are bytes (or text a test wrote). */
export type RecordHeaders = Record<string, Buffer | string | Array<Buffer | string> | undefined>;

/** One record of a fetched batch. Offsets and timestamps are int64 decimal strings. */
export interface ConsumedRecord {
  offset: string;
  key: Buffer | null;
  value: Buffer | null;
  timestamp: string;
  headers?: RecordHeaders;
}

export interface TopicPartition { topic: string; partition: number }
export interface TopicPartitionOffset extends TopicPartition { offset: string }
/** Some partitions of a topic, or every one when `partitions` is absent. */
export interface TopicPartitions { topic: string; partitions?: number[] }

/**
 * Records of one partition fetched together, in offset order. Offsets may skip (compaction,
 * transaction markers, aborted records left out): `lastOffset()` is the last offset the fetch
 * covered, which is past the last record when markers follow it, and the batch may hold no record.
 */
export interface RecordBatch<R extends ConsumedRecord = ConsumedRecord> {
  topic: string;
  partition: number;
  messages: R[];
  highWatermark: string;
  lastOffset(): string;
  /** Records of the partition after this batch, as of the fetch. */
  offsetLag(): string;
}

/** What a batch handler may do while it holds a batch. */
export interface BatchHandle {
  /** The consumer still runs and the batch still belongs to this member's assignment. */
  current(): boolean;
  /** Confirms membership (and learns of a rebalance) while a batch takes long; rejects when expelled. */
  heartbeat(): Promise<void>;
  /** The next fetch of this partition starts just past `offset` (when the client does not resolve whole batches itself). */
  resolveOffset(offset: string): void;
}

export type BatchHandler = (batch: RecordBatch, handle: BatchHandle) => Promise<void>;

export interface RunOptions {
  eachBatch: BatchHandler;
  /** Batches of different partitions handled at once (1 when absent). */
  partitionsAtOnce?: number;
  /**
   * Whether a batch counts as read to its end once the handler returns (the default). False: only
   * what the handler resolved does, and the rest is fetched again.
   */
  resolveWholeBatch?: boolean;
}

/** What the client reports, as it happens. Listeners must not throw. */
export interface ConsumerClientEvents {
  /** The member joined the group (a rebalance ended): its id and partitions by topic. */
  assigned: (memberId: string, assignment: Readonly<Record<string, number[]>>) => void;
  /** A heartbeat succeeded; membership was confirmed as of `sentAt` (ms), when it was sent. */
  heartbeat: (sentAt: number) => void;
  /**
   * A batch was handled (records handed over or not): how far the fetch of its partition reached,
   * markers included, and how many records it held.
   */
  batchEnd: (batch: { topic: string; partition: number; lastOffset: string; records: number }) => void;
  /** A fetch returned. */
  fetched: () => void;
  /** The consumer failed; `restarting` when the client starts it again by itself. */
  crashed: (err: Error, restarting: boolean) => void;
}

/**
 * A member of one consumer group. Offsets committed are the next to read. Nothing is committed
 * unless `commit` is called (or a producer transaction commits offsets on the group's behalf).
 */
export interface ConsumerClient {
  readonly groupId: string;
  /** Connecting again while connected (or connecting) is answered by the same connect. */
  connect(): Promise<void>;
  /** Where a partition the group has no offset for starts: its first record or its end. */
  subscribe(topics: readonly string[], from: 'earliest' | 'latest'): Promise<void>;
  /** Starts fetching and handing batches over; resolves once running. */
  run(options: RunOptions): Promise<void>;
  pause(partitions: readonly TopicPartitions[]): void;
  resume(partitions: readonly TopicPartitions[]): void;
  paused(): Array<{ topic: string; partitions: number[] }>;
  /** The next fetch of the partition starts at `offset`; made before the first fetch, it is where reading starts. */
  seek(position: TopicPartitionOffset): void;
  commit(offsets: readonly TopicPartitionOffset[]): Promise<void>;
  on<E extends keyof ConsumerClientEvents>(event: E, listener: ConsumerClientEvents[E]): () => void;
  /**
   * Called when the group starts a rebalance, before this member rejoins: the moment to finish
   * and commit what it can while the old generation's commits are still accepted.
   */
  beforeRejoining(hook: () => Promise<void>): () => void;
  /** Stops fetching and leaves the group; connect and run again to come back. */
  stop(): Promise<void>;
  disconnect(): Promise<void>;
}
