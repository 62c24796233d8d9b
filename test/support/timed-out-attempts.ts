// Which events had an attempt that delivery timed out, from the trace delivery writes of every
// attempt (the delivery-attempts topic). A timed-out request may still have reached the receiver
// (on two starved cores an answer written in time can be read after delivery's timer fired), so a
// later copy of such an event is delivery's at-least-once at work, not a defect; a copy of an event
// with no timed-out attempt is.
import type { TraceRecords } from '@switchyard/platform/schemas/generated';
import { TopicReader, topicEnds } from './topic-reader.js';

export class TimedOutAttempts {
  private constructor(private readonly reader: TopicReader, private readonly topic: string) {}

  /**
   * Follows the trace from its end now: what scenarios started after this make is all read. One
   * reader for a whole suite: it decodes in the process that hosts the receivers.
   */
  static async follow(topic: string): Promise<TimedOutAttempts> {
    const reader = await new TopicReader([topic], undefined, await topicEnds([topic])).start();
    return new TimedOutAttempts(reader, topic);
  }

  /** Per messageId, how many of its attempts to this destination timed out (so far). */
  counts(destinationId: string): Map<string, number> {
    const counts = new Map<string, number>();
    for (const trace of this.reader.values<TraceRecords>(this.topic)) {
      for (const a of trace.attempts) {
        if (a.destinationId === destinationId && a.error === 'timeout') counts.set(a.messageId, (counts.get(a.messageId) ?? 0) + 1);
      }
    }
    return counts;
  }

  /** Of these events' extra copies at the destination's receiver (`copies(id)` − 1), those that followed an attempt that timed out. */
  excused(destinationId: string, ids: Iterable<string>, copies: (id: string) => number): number {
    const counts = this.counts(destinationId);
    let n = 0;
    for (const id of ids) n += Math.min(Math.max(0, copies(id) - 1), counts.get(id) ?? 0);
    return n;
  }

  async stop(): Promise<void> {
    await this.reader.stop();
  }
}
