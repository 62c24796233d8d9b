// The consumer client (consuming/consumer-client.ts) on kafkajs 2.2.4 and its corrections
// (kafkajs/index.ts): the one place a kafkajs consumer, its batches and its events are handled.
// Services and the consumer runner see only ConsumerClient.
import { beforeRejoining } from '../kafkajs/index.js';
import type { Logger } from '../logger.js';
import type { ConsumerClient, ConsumerClientEvents, RecordBatch, TopicPartitions } from '../consuming/consumer-client.js';
import { createConsumer, type Consumer, type Kafka } from './client.js';

/** A consumer group member's settings; times in ms. */
export interface ConsumerSettings {
  groupId: string;
  /** How long the group waits for a heartbeat before giving the member's partitions away (30 s when absent). */
  sessionTimeout?: number;
  heartbeatInterval?: number;
  /** How long a fetch waits for `minBytes` (an idle poll). */
  maxWaitTimeInMs?: number;
  minBytes?: number;
  maxBytesPerPartition?: number;
}

/**
 * A consumer group member on kafkajs: restarted after a crash kafkajs does not recover from
 * (client.ts, createConsumer), its failures judged by the failure watch, read committed.
 */
export function kafkajsConsumer(kafka: Kafka, settings: ConsumerSettings, logger?: Logger): ConsumerClient {
  const consumer = createConsumer(kafka, settings, logger);
  return new KafkajsConsumerClient(consumer, settings.groupId);
}

class KafkajsConsumerClient implements ConsumerClient {
  /** The connect under way or made: a service connects first (for its readiness), the runner again. */
  private connecting: Promise<void> | undefined;

  constructor(private readonly consumer: Consumer, readonly groupId: string) {}

  connect(): Promise<void> {
    this.connecting ??= this.consumer.connect().catch((err: unknown) => { this.connecting = undefined; throw err; });
    return this.connecting;
  }

  async subscribe(topics: readonly string[], from: 'earliest' | 'latest'): Promise<void> {
    for (const topic of topics) await this.consumer.subscribe({ topic, fromBeginning: from === 'earliest' });
  }

  run({ eachBatch, partitionsAtOnce = 1, resolveWholeBatch = true }: Parameters<ConsumerClient['run']>[0]): Promise<void> {
    return this.consumer.run({
      autoCommit: false,
      eachBatchAutoResolve: resolveWholeBatch,
      partitionsConsumedConcurrently: partitionsAtOnce,
      // kafkajs's Batch has every field of RecordBatch: handed over as it is, no copy per batch.
      eachBatch: ({ batch, heartbeat, resolveOffset, isRunning, isStale }) =>
        eachBatch(batch as RecordBatch, { current: () => isRunning() && !isStale(), heartbeat, resolveOffset }),
    });
  }

  pause(partitions: readonly TopicPartitions[]): void { this.consumer.pause([...partitions]); }
  resume(partitions: readonly TopicPartitions[]): void { this.consumer.resume([...partitions]); }
  paused(): Array<{ topic: string; partitions: number[] }> { return this.consumer.paused(); }
  seek(position: { topic: string; partition: number; offset: string }): void { this.consumer.seek(position); }
  commit(offsets: ReadonlyArray<{ topic: string; partition: number; offset: string }>): Promise<void> { return this.consumer.commitOffsets([...offsets]); }

  on<E extends keyof ConsumerClientEvents>(event: E, listener: ConsumerClientEvents[E]): () => void {
    const { consumer } = this;
    const { events } = consumer;
    switch (event) {
      case 'assigned': {
        const l = listener as ConsumerClientEvents['assigned'];
        return consumer.on(events.GROUP_JOIN, ({ payload }) => l(payload.memberId, payload.memberAssignment));
      }
      case 'heartbeat': {
        const l = listener as ConsumerClientEvents['heartbeat'];
        // A heartbeat confirms membership as of when it was sent, not when its answer was read: the
        // answer to one sent just before a freeze (SIGSTOP, a starved process) is read as the
        // process resumes, though the group may have expelled the member meanwhile.
        let sentAt: number | undefined;
        const offRequest = consumer.on(events.REQUEST, ({ payload }) => { if (payload.apiName === 'Heartbeat') sentAt = payload.sentAt; });
        const offHeartbeat = consumer.on(events.HEARTBEAT, () => l(sentAt ?? Date.now()));
        return () => { offRequest(); offHeartbeat(); };
      }
      case 'batchEnd': {
        const l = listener as ConsumerClientEvents['batchEnd'];
        return consumer.on(events.END_BATCH_PROCESS, ({ payload }) => l({ topic: payload.topic, partition: payload.partition, lastOffset: payload.lastOffset, records: payload.batchSize }));
      }
      case 'fetched': {
        const l = listener as ConsumerClientEvents['fetched'];
        return consumer.on(events.FETCH, () => l());
      }
      case 'crashed': {
        const l = listener as ConsumerClientEvents['crashed'];
        return consumer.on(events.CRASH, ({ payload }) => l(payload.error, payload.restart));
      }
      default:
        throw new Error(`unknown consumer event ${String(event)}`);
    }
  }

  beforeRejoining(hook: () => Promise<void>): () => void { return beforeRejoining(this.groupId, hook); }
  stop(): Promise<void> { return this.consumer.stop(); }
  disconnect(): Promise<void> {
    this.connecting = undefined;
    return this.consumer.disconnect();
  }
}
