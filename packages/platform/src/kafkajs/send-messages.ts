// Correction to kafkajs 2.2.4: a send over partitions led by several brokers writes each record
// once, and every record it acknowledges.
//
// Defect: kafkajs's src/producer/sendMessages.js makes one produce request per leader broker and
//  - awaits them with Promise.all, so a retry starts while other requests are still in flight and
//    sends those brokers their records again with sequence numbers already advanced: the broker
//    takes them as new records (duplicates, even with no fault: CONCURRENT_TRANSACTIONS from
//    AddPartitionsToTxn right after a commit is enough);
//  - remembers which *brokers* answered, not which partitions were written, so a retry after a
//    leader moved skips a partition whose new leader had answered for others, and the send
//    resolves without it ever being written (acknowledged and lost);
//  - skips a partition missing from the metadata instead of waiting for it;
//  - after a send that gave up with a produce request failed, hands the sequence numbers it took
//    back, so the next send reuses them and the broker takes it for a retry of a batch it may have
//    written (acknowledged, never written) or refuses it as out of order;
//  - groups a send's messages by partition in quadratic time (groupMessagesPerPartition).
// No upstream issue or pull request found for these (https://github.com/tulios/kafkajs/issues/22,
// closed in 2017, asked to retry only what failed).
// Before: records lost and duplicated on a cluster of several brokers (test/faults-cluster.test.ts;
// RELIABILITY.md has the evidence, tools/repro/kafkajs-multibroker-transactions.ts reproduces the
// duplicates).
// After: kafkajs's request shape, locks and sequence handling are kept; a failed attempt settles
// every request before the retry, the written set is per topic-partition, a partition without a
// known leader fails the attempt (metadata refresh, retry), messages are assigned to partitions
// once (a retry never moves a written record), an idempotent producer whose send gave up takes a
// new producer id first (as the Java producer does), and grouping is linear.
// Reproduced by: send-messages.test.ts (one case per defect above); in a cluster by
// test/faults-cluster.test.ts.
// Installed by install.ts: replaces kafkajs/src/producer/sendMessages.js in Node's module cache
// before kafkajs loads.
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const { KafkaJSMetadataNotLoaded } = require('kafkajs/src/errors') as { KafkaJSMetadataNotLoaded: new (message: string) => Error };
const { staleMetadata } = require('kafkajs/src/protocol/error') as { staleMetadata: (error: unknown) => boolean };
const responseSerializer = require('kafkajs/src/producer/responseSerializer') as (response: unknown) => PartitionResult[];

/**
 * The messages of one topic by the partition the partitioner picks, in their order: what kafkajs's
 * groupMessagesPerPartition returns, in linear time (it copies a partition's array for every
 * message it adds, quadratic in a send's size).
 */
export function groupMessagesPerPartition<M>({ topic, partitionMetadata, messages, partitioner }: { topic: string; partitionMetadata: PartitionMetadata[]; messages: M[]; partitioner: Partitioner<M> }): Record<string, M[]> {
  const perPartition: Record<string, M[]> = {};
  if (partitionMetadata.length === 0) return perPartition;
  for (const message of messages) (perPartition[partitioner({ topic, partitionMetadata, message })] ??= []).push(message);
  return perPartition;
}

type Partitioner<M> = (args: { topic: string; partitionMetadata: PartitionMetadata[]; message: M }) => number;

interface PartitionMetadata {
  partitionId: number;
  leader?: number | null;
}

interface PartitionResult {
  topicName: string;
  partition: number;
}

interface Broker {
  nodeId: number;
  produce(request: Record<string, unknown>): Promise<unknown>;
}

interface KafkaError extends Error {
  retriable?: boolean;
  host?: string;
  port?: number;
}

/** The parts of kafkajs's internal objects a send uses (kafkajs/src/producer/messageProducer.js passes them). */
interface SendMessagesContext {
  logger: { debug(message: string, extra?: object): void; error(message: string, extra?: object): void };
  cluster: {
    refreshMetadataIfNecessary(): Promise<void>;
    refreshMetadata(): Promise<void>;
    addMultipleTargetTopics(topics: string[]): Promise<void>;
    findTopicPartitionMetadata(topic: string): PartitionMetadata[];
    findBroker(input: { nodeId: number }): Promise<Broker>;
    removeBroker(input: { host?: string; port?: number }): void;
    isConnected(): boolean;
    connect(): Promise<void>;
  };
  partitioner: unknown;
  eosManager: {
    isTransactional(): boolean;
    getTransactionalId(): string;
    getProducerId(): number;
    getProducerEpoch(): number;
    addPartitionsToTransaction(topicData: TopicData[]): Promise<void>;
    getSequence(topic: string, partition: number): number;
    updateSequence(topic: string, partition: number, increment: number): void;
    acquireBrokerLock(broker: Broker): Promise<void>;
    releaseBrokerLock(broker: Broker): void | Promise<void>;
    isInitialized(): boolean;
    initProducerId(): Promise<void>;
  };
  retrier: <T>(attempt: (bail: (error: Error) => void, retryCount: number, retryTime: number) => Promise<T>) => Promise<T>;
}

interface SendRequest {
  acks: number;
  timeout?: number;
  compression?: number;
  topicMessages: Array<{ topic: string; messages: unknown[] }>;
}

interface TopicData {
  topic: string;
  partitions: Array<{ partition: number; messages: unknown[]; firstSequence?: number }>;
}

const partitionKey = (topic: string, partition: number): string => `${partition}\u0000${topic}`;

/** kafkajs's sendMessages factory, with each attempt sending only the partitions not yet written. */
export function createSendMessages({ logger, cluster, partitioner, eosManager, retrier }: SendMessagesContext) {
  /**
   * A send gave up after a produce request failed: the broker may have written those records, and
   * the sequence numbers they took were handed back. The next send would reuse them, and the broker
   * would take it for a retry of the written batch (answered as a duplicate: acknowledged, never
   * written) or refuse it as out of order. An idempotent producer starts over with a new producer id
   * first, as the Java producer does; a transactional one is aborted by its caller.
   */
  let sequencesInDoubt = false;
  return async (request: SendRequest): Promise<PartitionResult[]> => {
    if (sequencesInDoubt) {
      await eosManager.initProducerId();
      sequencesInDoubt = false;
    }
    let produceFailed = false;
    try {
      return await send(request, () => { produceFailed = true; });
    } catch (error) {
      if (produceFailed && eosManager.isInitialized() && !eosManager.isTransactional()) sequencesInDoubt = true;
      throw error;
    }
  };

  async function send({ acks, timeout, compression, topicMessages }: SendRequest, onProduceFailed: () => void): Promise<PartitionResult[]> {
    const messagesPerTopic = new Map<string, Record<string, unknown[]>>();
    const written = new Map<string, PartitionResult[]>();

    /** The partitions not yet written, grouped by their current leader. */
    const pendingPerLeader = async (): Promise<Map<number, TopicData[]>> => {
      await cluster.refreshMetadataIfNecessary();
      const perLeader = new Map<number, TopicData[]>();
      for (const { topic, messages } of topicMessages) {
        const partitionMetadata = cluster.findTopicPartitionMetadata(topic);
        if (partitionMetadata.length === 0) {
          logger.debug('Producing to topic without metadata', { topic });
          throw new KafkaJSMetadataNotLoaded('Producing to topic without metadata');
        }
        let perPartition = messagesPerTopic.get(topic);
        if (!perPartition) {
          perPartition = groupMessagesPerPartition({ topic, partitionMetadata, messages, partitioner: partitioner as Partitioner<unknown> });
          messagesPerTopic.set(topic, perPartition);
        }
        for (const [id, partitionMessages] of Object.entries(perPartition)) {
          const partition = Number(id);
          if (written.has(partitionKey(topic, partition))) continue;
          const leader = partitionMetadata.find((metadata) => metadata.partitionId === partition)?.leader;
          if (leader === null || leader === undefined || leader < 0) throw new KafkaJSMetadataNotLoaded(`No leader known for ${topic}[${partition}]`);
          const topics = perLeader.get(leader) ?? [];
          perLeader.set(leader, topics);
          let entry = topics.find((candidate) => candidate.topic === topic);
          if (!entry) topics.push((entry = { topic, partitions: [] }));
          entry.partitions.push({ partition, messages: partitionMessages });
        }
      }
      return perLeader;
    };

    const produceTo = async (nodeId: number, topicData: TopicData[]): Promise<void> => {
      const broker = await cluster.findBroker({ nodeId });
      await eosManager.acquireBrokerLock(broker);
      try {
        if (eosManager.isTransactional()) await eosManager.addPartitionsToTransaction(topicData);
        for (const { topic, partitions } of topicData) {
          for (const entry of partitions) {
            entry.firstSequence = eosManager.getSequence(topic, entry.partition);
            eosManager.updateSequence(topic, entry.partition, entry.messages.length);
          }
        }
        let response: unknown;
        try {
          response = await broker.produce({
            transactionalId: eosManager.isTransactional() ? eosManager.getTransactionalId() : undefined,
            producerId: eosManager.getProducerId(),
            producerEpoch: eosManager.getProducerEpoch(),
            acks,
            timeout,
            compression,
            topicData,
          });
        } catch (error) {
          // Sent again with the same sequence numbers, which the broker recognises if it did write them.
          onProduceFailed();
          for (const { topic, partitions } of topicData) {
            for (const entry of partitions) eosManager.updateSequence(topic, entry.partition, -entry.messages.length);
          }
          throw error;
        }
        const results = acks !== 0 ? responseSerializer(response) : [];
        for (const { topic, partitions } of topicData) {
          for (const { partition } of partitions) {
            written.set(partitionKey(topic, partition), results.filter((result) => result.topicName === topic && result.partition === partition));
          }
        }
      } finally {
        await eosManager.releaseBrokerLock(broker);
      }
    };

    return retrier(async (bail, retryCount, retryTime) => {
      await cluster.addMultipleTargetTopics(topicMessages.map(({ topic }) => topic));
      try {
        const perLeader = await pendingPerLeader();
        const outcomes = await Promise.allSettled([...perLeader].map(([nodeId, topicData]) => produceTo(nodeId, topicData)));
        const failure = outcomes.find((outcome): outcome is PromiseRejectedResult => outcome.status === 'rejected');
        if (failure) throw failure.reason;
        return [...written.values()].flat();
      } catch (caught) {
        const error = caught as KafkaError;
        if (error.name === 'KafkaJSConnectionClosedError') cluster.removeBroker({ host: error.host, port: error.port });
        if (!cluster.isConnected()) {
          logger.debug(`Cluster has disconnected, reconnecting: ${error.message}`, { retryCount, retryTime });
          await cluster.connect();
          await cluster.refreshMetadata();
          throw error;
        }
        const refreshFirst =
          staleMetadata(error) ||
          error.name === 'KafkaJSMetadataNotLoaded' ||
          error.name === 'KafkaJSConnectionError' ||
          error.name === 'KafkaJSConnectionClosedError' ||
          (error.name === 'KafkaJSProtocolError' && error.retriable);
        logger.error(refreshFirst ? `Failed to send messages: ${error.message}` : error.message, { retryCount, retryTime });
        if (refreshFirst) {
          await cluster.refreshMetadata();
          throw error;
        }
        if (error.retriable) throw error;
        bail(error);
        return [];
      }
    });
  }
}
