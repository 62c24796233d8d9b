import { setTimeout as sleep } from 'node:timers/promises';
import type { AvroCodec, Decoded } from '@switchyard/platform/codec/avro-codec';
import { RegistryUnavailableError } from '@switchyard/platform/errors';
import type { Logger } from '@switchyard/platform/logger';
import type { FetchedRecord } from '@switchyard/platform/kafka/groupless-reader';
import type { DeferredRange, DeliveryTask } from '@switchyard/platform/schemas/generated';
import { eventRecordOf, freshTask } from '@switchyard/platform/tasks/delivery-task';
import { webhookBodyText } from '@switchyard/platform/tasks/webhook-body';
import { mayJoinRange } from './deferred-ranges.js';

/**
 * A record whose writer schema the registry did not answer for (restarting, say) is read again
 * this much later: its partition waits, the others go on. A range being read waits in place.
 */
export const REGISTRY_RETRY_MS = 1000;

export interface RangeTasksOptions {
  codec: AvroCodec;
  logger: Logger;
  /** Writes an unreadable record to invalid-events (DeliveryConsumerOptions.setAside). */
  setAside: (value: Buffer | null, topic: string, partition: number, offset: string, reason: string) => Promise<void>;
  /** Counts (and now and then logs) a lookup the registry did not answer. */
  registryUnavailable: (err: RegistryUnavailableError) => void;
  stopping: () => boolean;
}

/** The tasks of a deferred range, from the records read back: of the delivery topic, or the ingest records of a range fan-out held. */
export class RangeTasks {
  constructor(private readonly opts: RangeTasksOptions) {}

  /**
   * The range's tasks among the records read: its destination's, never attempted. Records whose key
   * names another destination are not decoded (keys are destinationId:userKey); if that finds fewer
   * tasks than the range counted, every record is decoded, and a shortfall left is logged.
   */
  async tasksOfRange(records: FetchedRecord[], range: DeferredRange): Promise<Array<{ offset: string; task: DeliveryTask }>> {
    if (range.heldOffsets) return this.heldTasksOfRange(records, range, range.heldOffsets);
    const prefix = `${range.destinationId}:`;
    const collect = async (byKey: boolean) => {
      const tasks: Array<{ offset: string; task: DeliveryTask }> = [];
      for (const record of records) {
        if (byKey && !record.key?.toString('utf8').startsWith(prefix)) continue;
        let decoded: Decoded;
        try {
          decoded = await this.decodeWaitingForRegistry(record.value);
        } catch (err) {
          if (err instanceof RegistryUnavailableError) throw err; // shutdown began: the range stays unfinished
          continue; // set aside on invalid-events when it was first read
        }
        if (decoded.name !== 'io.switchyard.pipeline.DeliveryTask') continue;
        const task = decoded.value;
        if (task.destinationId === range.destinationId && mayJoinRange(task)) tasks.push({ offset: record.offset, task });
      }
      return tasks;
    };
    let tasks = await collect(true);
    if (tasks.length < range.tasks) tasks = await collect(false);
    if (tasks.length < range.tasks) {
      this.opts.logger.error({ ...range, found: tasks.length }, 'a deferred range holds fewer tasks than it counted');
    }
    return tasks;
  }

  /**
   * The tasks of a range fan-out held, built from its ingest records as fan-out would have written
   * them (created when they were held). Each held event was decided and its body built once already,
   * so one that now fails is a fault: set aside on invalid-events with the reason, like an
   * unreadable task.
   */
  private async heldTasksOfRange(records: FetchedRecord[], range: DeferredRange, heldOffsets: number[]): Promise<Array<{ offset: string; task: DeliveryTask }>> {
    const held = new Set(heldOffsets);
    const tasks: Array<{ offset: string; task: DeliveryTask }> = [];
    for (const record of records) {
      if (!held.has(Number(record.offset))) continue;
      let reason: string;
      try {
        const decoded = await this.decodeWaitingForRegistry(record.value);
        const event = eventRecordOf(decoded);
        if (event) {
          tasks.push({ offset: record.offset, task: freshTask(event, range.destinationId, webhookBodyText(event), range.firstAttemptAt) });
          continue;
        }
        reason = `${decoded.name} is not an event type`;
      } catch (err) {
        if (err instanceof RegistryUnavailableError) throw err; // shutdown began: the range stays unfinished
        reason = (err as Error).message;
      }
      this.opts.logger.error({ topic: range.topic, partition: range.partition, offset: record.offset, destinationId: range.destinationId, reason }, 'a held event cannot be made a task');
      await this.opts.setAside(record.value, range.topic, range.partition, record.offset, `held for ${range.destinationId}: ${reason}`);
    }
    if (tasks.length < range.tasks) {
      this.opts.logger.error({ ...range, heldOffsets: undefined, found: tasks.length }, 'a held range holds fewer events than it counted');
    }
    return tasks;
  }

  /**
   * A range's record decoded, waiting out a registry that does not answer: the range holds a
   * deferral slot, not the partition, so it waits in place. Throws RegistryUnavailableError once
   * shutdown began, and CodecError for a record that cannot be read.
   */
  private async decodeWaitingForRegistry(value: Buffer | null): Promise<Decoded> {
    for (;;) {
      try {
        return this.opts.codec.decodeKnown(value) ?? await this.opts.codec.decode(value);
      } catch (err) {
        if (!(err instanceof RegistryUnavailableError) || this.opts.stopping()) throw err;
        this.opts.registryUnavailable(err);
        await sleep(REGISTRY_RETRY_MS);
      }
    }
  }
}
