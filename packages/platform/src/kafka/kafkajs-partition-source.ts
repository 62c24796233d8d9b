// A GrouplessReader's Kafka side on kafkajs 2.2.4, which has no public group-less consumer (its
// consumer always joins a group). It uses the client's own cluster object, as the kafkajs consumer
// and producer do: created by the Kafka instance's private factory (so brokers, TLS, SASL and the
// log go where the service configured them), fetching from each partition's leader with the
// Fetch request kafkajs's consumer sends (read_committed, aborted and control records left out).
import { setTimeout as sleep } from 'node:timers/promises';
import { withoutAbortedRecords } from '../kafkajs/index.js';
import { OffsetOutOfRangeError, type FetchedPartition, type FetchedRecord, type PartitionSource } from './groupless-reader.js';
import type { Kafka } from './client.js';
import type { PositionSource } from '../exactly-once/position-log.js';

const READ_COMMITTED = 1;
/** How long close() waits for calls in progress before it disconnects anyway. */
const CLOSE_WAIT_MS = 2000;
const PARTITION_MAX_BYTES = 1 << 20;

interface FetchedMessage extends FetchedRecord {
  isControlRecord?: boolean;
  batchContext: { producerId: string; inTransaction: boolean };
}

interface FetchResponse {
  responses: Array<{
    topicName: string;
    partitions: Array<{
      partition: number;
      highWatermark: string;
      lastStableOffset?: string;
      abortedTransactions?: Array<{ producerId: string; firstOffset: string }>;
      messages: FetchedMessage[];
    }>;
  }>;
}

/** The parts of kafkajs's internal cluster (src/cluster/index.js) a reader uses. */
interface Cluster {
  connect(): Promise<void>;
  disconnect(): Promise<void>;
  addTargetTopic(topic: string): Promise<void>;
  refreshMetadata(): Promise<void>;
  refreshMetadataIfNecessary(): Promise<void>;
  findTopicPartitionMetadata(topic: string): Array<{ partitionId: number; leader?: number | null }>;
  findBroker(input: { nodeId: number }): Promise<{ fetch(request: Record<string, unknown>): Promise<FetchResponse> }>;
  fetchTopicsOffset(topics: Array<{ topic: string; partitions: Array<{ partition: number }>; fromBeginning: boolean }>): Promise<Array<{ topic: string; partitions: Array<{ partition: number; offset: string }> }>>;
}

type CreateCluster = (options: { metadataMaxAge?: number; allowAutoTopicCreation?: boolean; isolationLevel?: number }) => Cluster;

/**
 * The cluster's own retries stay short: the reader retries every failed fetch itself (from 100 ms
 * up to 2 s). With the client's retries (8, up to 30 s apart), a reader whose every broker was
 * unreachable sat inside kafkajs's seed-broker reconnect for 5 s after the broker was back.
 */
const CLUSTER_RETRY = { initialRetryTime: 100, maxRetryTime: 1000, retries: 2 };

function clusterOf(kafka: Kafka): Cluster {
  const symbols = Object.getOwnPropertySymbols(kafka);
  const own = kafka as unknown as Record<symbol, unknown>;
  const factory = symbols.find((s) => s.description === 'private:Kafka:createCluster');
  const retry = symbols.find((s) => s.description === 'private:Kafka:clusterRetry');
  const create = factory ? own[factory] : undefined;
  if (typeof create !== 'function' || !retry) throw new Error('this kafkajs has no cluster factory where 2.2.4 has it: kafka/kafkajs-partition-source.ts needs updating');
  // The factory reads the client's retry settings when called: lent ours for this one (synchronous) call.
  const clientRetry = own[retry];
  own[retry] = { ...(clientRetry as object | undefined), ...CLUSTER_RETRY };
  try {
    return (create as CreateCluster)({ metadataMaxAge: 60_000, allowAutoTopicCreation: false, isolationLevel: READ_COMMITTED });
  } finally {
    own[retry] = clientRetry;
  }
}

/** Every partition of `topic`, fetched straight from its leader. Connects on first use. */
export function kafkajsPartitionSource(kafka: Kafka, topic: string): PartitionSource & PositionSource {
  const cluster = clusterOf(kafka);
  let connected: Promise<void> | undefined;
  let closed = false;
  const ready = () => {
    if (closed) return Promise.reject(new Error('the partition source is closed'));
    connected ??= cluster.connect().then(() => cluster.addTargetTopic(topic)).catch((err: unknown) => { connected = undefined; throw err; });
    return connected;
  };
  // Every call in progress: close() waits for them before it disconnects, since a connect or a
  // metadata refresh still under way would open a connection after the disconnect, and that
  // socket kept the process alive (a test file timed out after all its tests had passed).
  const inFlight = new Set<Promise<unknown>>();
  const tracked = <T>(work: () => Promise<T>): Promise<T> => {
    const run = work();
    inFlight.add(run);
    void run.then(() => inFlight.delete(run), () => inFlight.delete(run));
    return run;
  };

  const source: PartitionSource & PositionSource = {
    async partitions() {
      await ready();
      await cluster.refreshMetadataIfNecessary();
      return cluster.findTopicPartitionMetadata(topic).map((p) => p.partitionId).sort((a, b) => a - b);
    },

    async earliestOffset(partition) {
      await ready();
      const [answer] = await cluster.fetchTopicsOffset([{ topic, partitions: [{ partition }], fromBeginning: true }]);
      const offset = answer?.partitions.find((p) => p.partition === partition)?.offset;
      if (offset === undefined) throw new Error(`no earliest offset for ${topic} partition ${partition}`);
      return BigInt(offset);
    },

    async latestOffset(partition) {
      await ready();
      // The cluster reads read_committed: ListOffsets answers the last stable offset.
      const [answer] = await cluster.fetchTopicsOffset([{ topic, partitions: [{ partition }], fromBeginning: false }]);
      const offset = answer?.partitions.find((p) => p.partition === partition)?.offset;
      if (offset === undefined) throw new Error(`no latest offset for ${topic} partition ${partition}`);
      return BigInt(offset);
    },

    async fetch(partition, offset, maxWaitMs): Promise<FetchedPartition> {
      await ready();
      await cluster.refreshMetadataIfNecessary();
      const leader = cluster.findTopicPartitionMetadata(topic).find((p) => p.partitionId === partition)?.leader;
      if (leader === undefined || leader === null || leader < 0) throw new Error(`no leader known for ${topic} partition ${partition}`);
      const broker = await cluster.findBroker({ nodeId: leader });
      let response: FetchResponse;
      try {
        response = await broker.fetch({
          replicaId: -1, isolationLevel: READ_COMMITTED, maxWaitTime: maxWaitMs, minBytes: 1, maxBytes: 4 * PARTITION_MAX_BYTES,
          topics: [{ topic, partitions: [{ partition, fetchOffset: String(offset), maxBytes: PARTITION_MAX_BYTES }] }],
        });
      } catch (err) {
        if ((err as Error).name === 'KafkaJSOffsetOutOfRange') throw new OffsetOutOfRangeError(partition, err);
        throw err;
      }
      const answer = response.responses.find((r) => r.topicName === topic)?.partitions.find((p) => p.partition === partition);
      if (!answer) throw new Error(`the fetch answer has no ${topic} partition ${partition}`);
      // A fetch returns whole record batches: the first may begin below the requested offset.
      const inRange = answer.messages.filter((m) => BigInt(m.offset) >= offset);
      const last = inRange.at(-1);
      const records = withoutAbortedRecords({ messages: inRange, abortedTransactions: answer.abortedTransactions ?? null })
        .filter((m) => !m.isControlRecord)
        .map(({ offset: o, key, value }) => ({ offset: o, key: key ?? null, value: value ?? null }));
      const stable = answer.lastStableOffset !== undefined ? BigInt(answer.lastStableOffset) : -1n;
      return {
        records,
        nextOffset: last ? BigInt(last.offset) + 1n : offset,
        endOffset: stable >= 0n ? stable : BigInt(answer.highWatermark),
      };
    },

    async recover() {
      if (!connected || closed) return;
      await cluster.refreshMetadata().catch(() => undefined);
    },

    async close() {
      closed = true;
      // Bounded: a request to a broker that is gone may take its whole timeout.
      await Promise.race([Promise.allSettled([...inFlight]), sleep(CLOSE_WAIT_MS)]);
      connected = undefined;
      await cluster.disconnect().catch(() => undefined);
    },
  };
  // A failed offset lookup refreshes the metadata before the error goes on: after a leader moved,
  // the cluster's metadata is stale for up to its 60 s max age, and every lookup until then went
  // to the old leader (fan-out's position log read this way could not fence a partition in).
  const refreshingOnFailure = <T>(work: () => Promise<T>) => async (): Promise<T> => {
    try {
      return await work();
    } catch (err) {
      await source.recover(err);
      throw err;
    }
  };
  return {
    partitions: () => tracked(() => source.partitions()),
    earliestOffset: (partition) => tracked(refreshingOnFailure(() => source.earliestOffset(partition))),
    latestOffset: (partition) => tracked(refreshingOnFailure(() => source.latestOffset(partition))),
    fetch: (partition, offset, maxWaitMs) => tracked(() => source.fetch(partition, offset, maxWaitMs)),
    recover: (error) => tracked(() => source.recover(error)),
    close: () => source.close(),
  };
}
