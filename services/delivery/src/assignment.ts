import { setTimeout as sleep } from 'node:timers/promises';
import type { ConsumerClient } from '@switchyard/platform/consuming/consumer-client';
import type { Logger } from '@switchyard/platform/logger';
import type { PartitionOffsets } from '@switchyard/platform/consuming/offset-tracker';

/**
 * While a range's destination is full (and not stalled), or the group rebalances, or membership is
 * unconfirmed, a range's run waits this long before looking again.
 */
export const RANGE_WAIT_POLL_MS = 20;

/**
 * After this long without a successful heartbeat (the process was frozen or starved), membership is
 * confirmed before the next task is sent: past the 10 s session timeout the group has given the
 * partition to another member, which sends it too. kafkajs heartbeats every second while the
 * consumer runs, so this costs nothing otherwise.
 */
export const MEMBERSHIP_CHECK_MS = 3000;

export interface GroupAssignmentOptions {
  consumer: Pick<ConsumerClient, 'on' | 'seek'>;
  /** The delivery consumer's offsets: where each partition it keeps or gets back starts. */
  offsets: PartitionOffsets;
  logger: Logger;
  clock: () => number;
  /** DeliveryConsumerOptions.groupOffsets: the group's committed offsets of some topics. */
  groupOffsets?: (topics: string[]) => Promise<Map<string, bigint>>;
  stopping: () => boolean;
}

/**
 * This member's place in its consumer group: the partitions it holds and since which assignment,
 * where each starts after a rebalance (never below the group's committed offset), whether a
 * heartbeat confirmed membership lately, and whether the group is rebalancing.
 */
export class GroupAssignment {
  /** When a heartbeat last succeeded (dated by when it was sent) or the group was last joined. */
  private lastHeartbeatOk = 0;
  /** This instance's member id in its group at the last assignment. */
  private memberId: string | undefined;
  /** Assignments so far: a batch fetched under an earlier one is left unsent (DeliveryConsumer.handleBatch). */
  private assignments = 0;
  /** The group is rebalancing (handOver ran): nothing new is sent until the next assignment. */
  private rebalancing = false;
  /**
   * Every partition of the last assignment until its first batch: the group's committed offset (read
   * once per assignment), and whether this instance sought it to a position of its own.
   */
  private readonly groupFloors = new Map<string, { offset: Promise<bigint | undefined>; ownPosition: boolean }>();
  /**
   * Since which assignment (its number) this member has held each partition without a break: a
   * range's run goes on only while the tier partition holding the range record stays this member's.
   */
  private readonly heldSince = new Map<string, number>();

  constructor(private readonly opts: GroupAssignmentOptions) {}

  /** Which assignment this is (how many there have been). */
  get generation(): number {
    return this.assignments;
  }

  /** The group is rebalancing (handOver ran): nothing new is sent until the next assignment. */
  get handingOver(): boolean {
    return this.rebalancing;
  }

  beginHandOver(): void {
    this.rebalancing = true;
  }

  /**
   * Dates each successful heartbeat, which confirms membership as of when it was sent (the client
   * says when): dated by the reading of its answer, one sent just before a freeze let a resumed
   * instance send tasks of partitions given away meanwhile for another second.
   */
  listenForHeartbeats(): () => void {
    return this.opts.consumer.on('heartbeat', (sentAt) => { this.lastHeartbeatOk = sentAt; });
  }

  /** No heartbeat has confirmed membership for MEMBERSHIP_CHECK_MS. */
  membershipUnconfirmed(now: number): boolean {
    return now - this.lastHeartbeatOk >= MEMBERSHIP_CHECK_MS;
  }

  /** The assignment since which this member has held `held` (`topic:partition`) without a break. */
  heldSinceOf(held: string): number | undefined {
    return this.heldSince.get(held);
  }

  /** This member still holds `held` without a break since assignment `heldSince`. */
  stillHeld(held: string, heldSince: number | undefined): boolean {
    return heldSince !== undefined && this.heldSince.get(held) === heldSince;
  }

  /**
   * A new assignment: records membership and sets where each partition starts; returns the
   * assigned partitions' `topic:partition` keys.
   */
  assign(memberId: string, assignment: Record<string, number[]>): Set<string> {
    this.opts.logger.info({ memberId, assignment }, 'partitions assigned');
    // The same member id: this instance stayed in the group through the rebalance (kafkajs gets a
    // new one after it was expelled, or restarted its consumer), so no other member read the
    // partitions it keeps in between.
    const stayed = memberId === this.memberId;
    this.memberId = memberId;
    this.assignments++;
    this.rebalancing = false;
    this.lastHeartbeatOk = this.opts.clock(); // joining is as good as a heartbeat
    const assigned = new Set(Object.entries(assignment).flatMap(([topic, partitions]) => partitions.map((p) => `${topic}:${p}`)));
    // kafkajs starts a partition at a seek still pending from before the rebalance (a paused
    // partition: destination full, tier record not due), else at the group's offset. A partition
    // this member kept goes on from just past the last record it read, and what it has in flight
    // still counts: nothing is read or sent twice. After an expulsion or a restart of the consumer
    // every partition starts over: read again from this instance's oldest unfinished record
    // (duplicates, never a gap), and its first batch is checked against the group's offset
    // (aboveGroupFloor), since another member may have delivered further meanwhile.
    this.groupFloors.clear();
    const { offsets } = this.opts;
    const ownPositions = new Set<string>();
    for (const [topic, partitions] of Object.entries(assignment)) {
      for (const partition of partitions) {
        const from = stayed ? offsets.readPosition(topic, partition) : offsets.resumePoint(topic, partition);
        if (from === undefined) continue;
        this.opts.consumer.seek({ topic, partition, offset: from });
        ownPositions.add(`${topic}:${partition}`);
      }
    }
    if (stayed) offsets.retainOnly(assigned);
    else offsets.clear();
    for (const key of [...this.heldSince.keys()]) if (!stayed || !assigned.has(key)) this.heldSince.delete(key);
    for (const key of assigned) if (!this.heldSince.has(key)) this.heldSince.set(key, this.assignments);
    if (this.opts.groupOffsets && assigned.size) {
      const groupOffsets = this.opts.groupOffsets(Object.keys(assignment)).catch((err: unknown) => {
        this.opts.logger.warn({ err }, 'could not read the group offsets: partitions resume from the consumer\'s position');
        return new Map<string, bigint>();
      });
      for (const [topic, partitions] of Object.entries(assignment)) {
        for (const partition of partitions) {
          const key = `${topic}:${partition}`;
          this.groupFloors.set(key, { offset: groupOffsets.then((byPartition) => byPartition.get(key)), ownPosition: ownPositions.has(key) });
        }
      }
    }
    return assigned;
  }

  /**
   * A partition's first batch after a rebalance starts where this instance left it (its own oldest
   * unfinished record) but never below the group's committed offset: what lies below was finished by
   * another member while this one was out of the group. A partition this instance has no position
   * of its own for starts at the group's offset: kafkajs keeps a seek still pending when a partition
   * is taken away (paused until a tier record is due) and applies it when the partition comes back,
   * possibly much later — it sent again all the other members had delivered meanwhile.
   */
  async aboveGroupFloor<R extends { offset: string }>(batch: { topic: string; partition: number; messages: R[] }): Promise<R[]> {
    const { topic, partition, messages } = batch;
    const key = `${topic}:${partition}`;
    const entry = this.groupFloors.get(key);
    if (!entry || messages.length === 0) return messages;
    const floor = await entry.offset;
    if (this.groupFloors.get(key) === entry) this.groupFloors.delete(key);
    const first = BigInt(messages[0]!.offset);
    if (floor === undefined || first === floor) return messages;
    if (first > floor) {
      if (entry.ownPosition) return messages;
      // Once only (the entry is gone): the offset at the floor may be a transaction marker.
      this.opts.logger.info({ topic, partition, from: messages[0]!.offset, to: String(floor) }, 'a position left from before a rebalance: reading from the group\'s offset');
      this.opts.consumer.seek({ topic, partition, offset: String(floor) });
      return [];
    }
    this.opts.logger.info({ topic, partition, from: messages[0]!.offset, to: String(floor) }, 'skipping records the group finished while this instance was out of it');
    const above = messages.filter((message) => BigInt(message.offset) >= floor);
    if (above.length === 0) this.opts.consumer.seek({ topic, partition, offset: String(floor) });
    return above;
  }

  /**
   * Whether a task whose attempt failed may have its retry or dead-letter record written: yes while
   * this member has held `held` without a break since the task was read. An attempt that ended
   * across a freeze past the session timeout (SIGSTOP, a starved process) first waits for a
   * heartbeat to confirm membership, or for the group to show the partition gone: its next owner
   * read the task again from the group's offset and sends it, and a retry record written here too
   * made the receiver get it once more from the tier.
   */
  async mayFollowUp(held: string, heldSince: number | undefined): Promise<boolean> {
    for (;;) {
      if (!this.stillHeld(held, heldSince)) return false;
      if (this.opts.stopping() || !this.membershipUnconfirmed(this.opts.clock())) return true;
      await sleep(RANGE_WAIT_POLL_MS);
    }
  }
}
