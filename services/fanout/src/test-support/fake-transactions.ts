import type { PartitionTransactionsOptions } from '@switchyard/platform/exactly-once/partition-transactions';
import type { PositionSource } from '@switchyard/platform/exactly-once/position-log';

type Producer = ReturnType<PartitionTransactionsOptions['createProducer']>;

/** A record a transaction wrote; `partition` undefined when the producer's partitioner was to place it. */
export interface WrittenRecord { topic: string; partition: number | undefined; key: string | null; value: Buffer | null }

/** A transaction that committed: under which transactional id, what it wrote, and the group offsets it sent. */
export interface CommittedTransaction { id: string; records: WrittenRecord[]; offsets: unknown[] }

/**
 * The transactional side of a broker, in memory: producers per transactional id with Kafka's
 * fencing (a new producer under an id bumps its epoch and the older one is refused from then on),
 * a log of what committed transactions wrote (what a read_committed reader sees), a count of
 * aborts, and failures to inject. `positions(topic)` reads a topic of the log as the position log
 * reads its own.
 */
export class FakeTransactionBroker {
  readonly committed: CommittedTransaction[] = [];
  aborted = 0;
  /** Producers created, by transactional id. */
  readonly producers = new Map<string, number>();
  private readonly epochs = new Map<string, number>();
  private readonly failures: Array<{ id: string | undefined; error: Error }> = [];

  /** The next commit of a transaction (under `id`, or any) fails with `error` and is aborted. */
  failNextCommit(error: Error, id?: string): void {
    this.failures.push({ id, error });
  }

  /** Every record committed to `topic`, in log order. */
  records(topic: string): WrittenRecord[] {
    return this.committed.flatMap((t) => t.records.filter((r) => r.topic === topic));
  }

  /** A transactional producer under `id`, as kafkajs's producer({ transactionalId }) gives one. */
  producer(id: string): Producer {
    this.producers.set(id, (this.producers.get(id) ?? 0) + 1);
    let epoch: number | undefined;
    const check = () => {
      if (epoch !== this.epochs.get(id)) throw Object.assign(new Error(`producer of ${id} fenced by a newer epoch`), { type: 'INVALID_PRODUCER_EPOCH' });
    };
    const producer = {
      connect: async () => undefined,
      disconnect: async () => undefined,
      transaction: async () => {
        // kafkajs initialises the producer id (InitProducerId, which fences) with its first transaction.
        if (epoch === undefined) this.epochs.set(id, (epoch = (this.epochs.get(id) ?? 0) + 1));
        check();
        const records: WrittenRecord[] = [];
        const offsets: unknown[] = [];
        let open = true;
        return {
          sendBatch: async ({ topicMessages }: { topicMessages: Array<{ topic: string; messages: Array<{ key: string | null; value: Buffer | null; partition?: number }> }> }) => {
            check();
            for (const { topic, messages } of topicMessages) for (const m of messages) records.push({ topic, partition: m.partition, key: m.key, value: m.value });
          },
          sendOffsets: async (sent: unknown) => { check(); offsets.push(sent); },
          commit: async () => {
            check();
            const at = this.failures.findIndex((f) => f.id === undefined || f.id === id);
            if (at >= 0) throw this.failures.splice(at, 1)[0]!.error;
            open = false;
            if (records.length || offsets.length) this.committed.push({ id, records, offsets });
          },
          abort: async () => {
            if (open && (records.length || offsets.length)) this.aborted++;
            open = false;
          },
        };
      },
    };
    return producer as unknown as Producer;
  }

  /** `topic` of the log as a PositionSource: partition N holds what transactions wrote to partition N. */
  positions(topic: string): PositionSource {
    const partitionLog = (partition: number) => this.records(topic).filter((r) => r.partition === partition);
    return {
      earliestOffset: async () => 0n,
      latestOffset: async (partition) => BigInt(partitionLog(partition).length),
      fetch: async (partition, offset) => {
        const log = partitionLog(partition);
        const end = BigInt(log.length);
        const records = log.slice(Number(offset)).map((r, i) => ({ offset: String(Number(offset) + i), key: null, value: r.value }));
        return { records, nextOffset: end, endOffset: end };
      },
    };
  }
}
