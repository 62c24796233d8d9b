import type { Consumer, EachBatchPayload } from '@switchyard/platform/kafka/client';

/** One record as the consumer hands it over: where it sits, its value and its headers. */
export interface InputRecord {
  offset: number;
  value: Buffer | null;
  headers?: Readonly<Record<string, string>>;
}

type TopicPartition = { topic: string; partition: number; offset: string };

/**
 * Just the part of a kafkajs consumer fan-out uses, with the test playing kafkajs's runner: it
 * joins the group (GROUP_JOIN with an assignment) and hands batches to the registered eachBatch.
 */
export class FakeConsumer {
  readonly events = { GROUP_JOIN: 'consumer.group_join' } as const;
  readonly seeks: TopicPartition[] = [];
  readonly pauses: unknown[] = [];
  readonly resumes: unknown[] = [];
  private eachBatch: ((payload: EachBatchPayload) => Promise<void>) | undefined;
  private readonly listeners = new Map<string, (event: { payload: Record<string, unknown> }) => void>();

  constructor(readonly topic: string) {}

  /** Typed as the consumer the code under test takes. */
  get asConsumer(): Consumer { return this as unknown as Consumer; }

  async subscribe(): Promise<void> {}
  on(event: string, listener: (event: { payload: Record<string, unknown> }) => void): void { this.listeners.set(event, listener); }
  async run({ eachBatch }: { eachBatch: (payload: EachBatchPayload) => Promise<void> }): Promise<void> { this.eachBatch = eachBatch; }
  seek(to: TopicPartition): void { this.seeks.push(to); }
  pause(partitions: unknown): void { this.pauses.push(partitions); }
  resume(partitions: unknown): void { this.resumes.push(partitions); }

  /** The group assigns this member `partitions` of the topic. */
  join(partitions: number[]): void {
    this.listeners.get(this.events.GROUP_JOIN)!({ payload: { memberId: 'member-1', memberAssignment: { [this.topic]: partitions } } });
  }

  /** One fetched batch of `partition`, handled as kafkajs would: resolves once eachBatch did, rejects as it did. */
  async deliver(partition: number, records: InputRecord[], { highWatermark, stale = false }: { highWatermark?: number; stale?: boolean } = {}): Promise<{ heartbeats: number }> {
    if (!this.eachBatch) throw new Error('run() was not called');
    const last = records.at(-1)?.offset ?? -1;
    const messages = records.map((r) => ({ offset: String(r.offset), key: null, value: r.value, headers: r.headers ?? {}, timestamp: '0', attributes: 0 }));
    const batch = { topic: this.topic, partition, messages, highWatermark: String(highWatermark ?? last + 1), lastOffset: () => String(last) };
    let heartbeats = 0;
    await this.eachBatch({ batch, heartbeat: async () => { heartbeats++; }, isStale: () => stale, isRunning: () => true } as unknown as EachBatchPayload);
    return { heartbeats };
  }
}
