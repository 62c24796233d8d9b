import { randomUUID } from 'node:crypto';
import type { AvroCodec } from '@switchyard/platform/codec/avro-codec';
import { createConsumer, type Consumer, type Kafka } from '@switchyard/platform/kafka/client';
import type { Logger } from '@switchyard/platform/logger';
import type { DeadLetter } from '@switchyard/platform/schemas/generated';

export interface IndexedDeadLetter {
  /** `<partition>-<offset>` on the dead-letter topic: stable, and all a replay needs. */
  id: string;
  letter: DeadLetter;
  replayedAt: number | null;
}

export interface DeadLetterQuery { destinationId?: string; reason?: string; since?: number; limit: number }

/**
 * The dead letters operators browse and replay, read from the dead-letter topic into memory. The
 * topic keeps 30 days; the index keeps at most `max` letters (the oldest are forgotten first, and
 * stay on the topic). Replay marks are kept in memory only: after a restart a letter shows as not
 * replayed again (replaying it twice delivers it twice; receivers dedupe on messageId).
 */
export class DeadLetterIndex {
  private readonly letters = new Map<string, IndexedDeadLetter>();
  private consumer: Consumer | undefined;

  constructor(private readonly opts: { kafka: Kafka; codec: AvroCodec; topic: string; logger: Logger; max: number }) {}

  async start(): Promise<void> {
    const consumer = createConsumer(this.opts.kafka, { groupId: `switchyard.dead-letter-index.${randomUUID()}`, maxWaitTimeInMs: 500 });
    this.consumer = consumer;
    await consumer.connect();
    await consumer.subscribe({ topic: this.opts.topic, fromBeginning: true });
    await consumer.run({
      autoCommit: false,
      eachMessage: async ({ partition, message }) => {
        try {
          const decoded = await this.opts.codec.decode(message.value);
          if (decoded.name !== 'io.switchyard.pipeline.DeadLetter') return;
          this.add(`${partition}-${message.offset}`, decoded.value);
        } catch (err) {
          this.opts.logger.warn({ err, partition, offset: message.offset }, 'unreadable dead letter skipped');
        }
      },
    });
  }

  add(id: string, letter: DeadLetter): void {
    this.letters.set(id, { id, letter, replayedAt: null });
    if (this.letters.size > this.opts.max) this.letters.delete(this.letters.keys().next().value!);
  }

  get(id: string): IndexedDeadLetter | undefined { return this.letters.get(id); }
  get size(): number { return this.letters.size; }
  get max(): number { return this.opts.max; }

  markReplayed(id: string, at: number): void {
    const entry = this.letters.get(id);
    if (entry) entry.replayedAt = at;
  }

  /** Newest first. */
  query({ destinationId, reason, since, limit }: DeadLetterQuery): { items: IndexedDeadLetter[]; total: number } {
    const matching = [...this.letters.values()].filter(({ letter }) =>
      (destinationId === undefined || letter.task.destinationId === destinationId)
      && (reason === undefined || letter.reason === reason)
      && (since === undefined || letter.failedAt >= since));
    matching.sort((a, b) => b.letter.failedAt - a.letter.failedAt);
    return { items: matching.slice(0, limit), total: matching.length };
  }

  async stop(): Promise<void> { await this.consumer?.disconnect(); }
}
