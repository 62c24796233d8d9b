// A ConsumerClient for unit tests: no broker; the test plays the group and the fetcher (assign,
// deliver a batch, start a rebalance) and reads back what the code under test asked for (commits,
// seeks, pauses, resumes).
import type { BatchHandler, ConsumedRecord, ConsumerClient, ConsumerClientEvents, RecordBatch, RunOptions, TopicPartitionOffset, TopicPartitions } from '../consumer-client.js';

type Listeners = { [E in keyof ConsumerClientEvents]: Set<ConsumerClientEvents[E]> };

export class FakeConsumerClient implements ConsumerClient {
  readonly groupId: string;
  connected = false;
  subscribed: { topics: readonly string[]; from: 'earliest' | 'latest' } | undefined;
  run_: RunOptions | undefined;
  readonly commits: Array<readonly TopicPartitionOffset[]> = [];
  readonly seeks: TopicPartitionOffset[] = [];
  readonly pauses: TopicPartitions[][] = [];
  readonly resumes: TopicPartitions[][] = [];
  /** What paused() answers. */
  pausedNow: Array<{ topic: string; partitions: number[] }> = [];
  stopped = false;
  disconnected = false;
  /** Replaces a commit's answer (a commit that fails or waits). */
  onCommit: ((offsets: readonly TopicPartitionOffset[]) => Promise<void>) | undefined;
  private readonly listeners: Listeners = { assigned: new Set(), heartbeat: new Set(), batchEnd: new Set(), fetched: new Set(), crashed: new Set() };
  private rejoinHook: (() => Promise<void>) | undefined;

  constructor(groupId = 'test-group') {
    this.groupId = groupId;
  }

  async connect(): Promise<void> { this.connected = true; }
  async subscribe(topics: readonly string[], from: 'earliest' | 'latest'): Promise<void> { this.subscribed = { topics, from }; }
  async run(options: RunOptions): Promise<void> { this.run_ = options; }
  pause(partitions: readonly TopicPartitions[]): void { this.pauses.push([...partitions]); }
  resume(partitions: readonly TopicPartitions[]): void { this.resumes.push([...partitions]); }
  paused(): Array<{ topic: string; partitions: number[] }> { return this.pausedNow; }
  seek(position: TopicPartitionOffset): void { this.seeks.push(position); }
  async commit(offsets: readonly TopicPartitionOffset[]): Promise<void> {
    this.commits.push(offsets);
    if (this.onCommit) await this.onCommit(offsets);
  }
  on<E extends keyof ConsumerClientEvents>(event: E, listener: ConsumerClientEvents[E]): () => void {
    const set = this.listeners[event] as Set<ConsumerClientEvents[E]>;
    set.add(listener);
    return () => { set.delete(listener); };
  }
  beforeRejoining(hook: () => Promise<void>): () => void {
    this.rejoinHook = hook;
    return () => { if (this.rejoinHook === hook) this.rejoinHook = undefined; };
  }
  async stop(): Promise<void> { this.stopped = true; }
  async disconnect(): Promise<void> { this.disconnected = true; }

  /** The group assigns these partitions to member `memberId`. */
  assign(memberId: string, byTopic: Record<string, number[]>): void {
    for (const l of this.listeners.assigned) l(memberId, byTopic);
  }

  /** The group starts a rebalance: the hook runs before this member rejoins. */
  async rebalance(): Promise<void> {
    await this.rejoinHook?.();
  }

  /** A fetch returned. */
  fetch(): void {
    for (const l of this.listeners.fetched) l();
  }

  /** The consumer failed; `restarting` when the client starts it again by itself. */
  crash(err: Error, restarting: boolean): void {
    for (const l of this.listeners.crashed) l(err, restarting);
  }

  heartbeatSucceeded(sentAt: number): void {
    for (const l of this.listeners.heartbeat) l(sentAt);
  }

  /**
   * Hands the handler a batch of a partition (records at these offsets, `lastOffset` past them when
   * markers follow) and returns what it resolved; `current` says whether it is still the member's.
   */
  async deliver(topic: string, partition: number, records: Array<string | Partial<ConsumedRecord> & { offset: string }>, opts: { lastOffset?: string; current?: () => boolean } = {}): Promise<{ resolved: string[] }> {
    const handler: BatchHandler | undefined = this.run_?.eachBatch;
    if (!handler) throw new Error('run() was not called');
    const messages: ConsumedRecord[] = records.map((r) => (typeof r === 'string' ? { offset: r } : r)).map((r) => ({ key: null, value: Buffer.from('x'), timestamp: '0', ...r }));
    const lastOffset = opts.lastOffset ?? messages.at(-1)?.offset ?? '0';
    const batch: RecordBatch = { topic, partition, messages, highWatermark: String(BigInt(lastOffset) + 1n), lastOffset: () => lastOffset, offsetLag: () => '0' };
    const resolved: string[] = [];
    await handler(batch, { current: opts.current ?? (() => true), heartbeat: async () => undefined, resolveOffset: (o) => { resolved.push(o); } });
    for (const l of this.listeners.batchEnd) l({ topic, partition, lastOffset, records: messages.length });
    return { resolved };
  }
}
