import { randomUUID } from 'node:crypto';
import type { AvroCodec } from '@switchyard/platform/codec/avro-codec';
import { RegistryUnavailableError } from '@switchyard/platform/errors';
import type { ConsumerClient } from '@switchyard/platform/consuming/consumer-client';
import { ConsumerRunner } from '@switchyard/platform/consuming/consumer-runner';
import type { Admin } from '@switchyard/platform/kafka/client';
import { throwawayGroupPrefixes } from '@switchyard/platform/kafka/groups';
import type { Logger } from '@switchyard/platform/logger';
import type { AudienceUserState } from '@switchyard/platform/schemas/generated';
import type { AudienceMetrics } from './audience-metrics.js';

export interface ChangelogOptions {
  /** A new member of the consumer group named (each restore reads in a group of its own). */
  newConsumer: (groupId: string) => ConsumerClient;
  /** Connected; reads where each partition of the changelog ends. */
  admin: Admin;
  codec: AvroCodec;
  topic: string;
  /** Names the throwaway consumer groups: `<prefix>audiences-restore.<uuid>`. */
  prefix: string;
  logger: Logger;
  metrics: AudienceMetrics;
  apply: (key: string, partition: number, value: AudienceUserState | null) => void;
  /** How long restoring one partition may take before the caller gives up (and tries again later). */
  timeoutMs?: number;
}

/**
 * Reads one partition of the state changelog from its start to its current end, applying every
 * record, and resolves with the number read. Called when the partition is fenced in, so no
 * transaction of a previous owner can still be open on it and its end includes that owner's last
 * commit. Read committed: state from aborted transactions never appears. A throwaway consumer group
 * (the client cannot assign partitions by hand) that pauses every other partition when it joins and
 * commits nothing. The end offset after a commit is its marker's offset + 1, a record no handler
 * sees, so the position comes from the client's batch ends, which report marker-only batches too.
 * audiences_changelog_lag shows what is left to read, and 0 once the partition's state is restored
 * (an empty changelog partition included) until it is given up (partitionReleased); a restore that
 * fails removes it (the partition is given up).
 */
export async function restorePartition(opts: ChangelogOptions, partition: number): Promise<number> {
  const { admin, codec, topic, logger, metrics, apply, timeoutMs = 60_000 } = opts;
  const lag = (records: bigint) => metrics.changelogLag.set({ partition: String(partition) }, Math.max(0, Number(records)));
  const offsets = await admin.fetchTopicOffsets(topic);
  const bounds = offsets.find((o) => o.partition === partition);
  if (!bounds || BigInt(bounds.high) <= BigInt(bounds.low)) {
    lag(0n);
    return 0;
  }
  const end = BigInt(bounds.high);
  lag(end - BigInt(bounds.low));
  const others = offsets.map((o) => o.partition).filter((p) => p !== partition);
  let read = 0;
  let done!: () => void;
  const finished = new Promise<void>((resolve) => { done = resolve; });
  const client = opts.newConsumer(`${throwawayGroupPrefixes(opts.prefix).audiencesRestore}${randomUUID()}`);
  const runner = new ConsumerRunner({
    client, topics: [topic], from: 'earliest', commits: 'none', logger,
    onAssigned: () => { if (others.length) runner.pause([{ topic, partitions: others }]); },
  });
  client.on('batchEnd', (batch) => {
    if (batch.topic !== topic || batch.partition !== partition) return;
    const position = BigInt(batch.lastOffset) + 1n;
    lag(end - position);
    if (position >= end) done();
  });
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`changelog partition ${partition} not read to offset ${end} within ${timeoutMs} ms`)), timeoutMs);
  });
  try {
    await runner.start(async (batch) => {
      if (batch.partition !== partition) return; // fetched before the pause took hold
      for (const message of batch.messages) {
        const key = message.key?.toString('utf8');
        if (!key) continue;
        read++;
        if (message.value === null) { apply(key, partition, null); continue; }
        try {
          const decoded = await codec.decode(message.value);
          if (decoded.name === 'io.switchyard.pipeline.AudienceUserState') apply(key, partition, decoded.value);
        } catch (err) {
          // Read again, not skipped: a failed batch does not end, so the position stays where it was.
          if (err instanceof RegistryUnavailableError) throw err;
          logger.warn({ err, key }, 'unreadable state record skipped');
        }
      }
    });
    await Promise.race([finished, timeout]);
    lag(0n);
    return read;
  } catch (err) {
    partitionReleased(metrics, partition);
    throw err;
  } finally {
    clearTimeout(timer);
    await runner.stop().catch(() => undefined);
  }
}

/** The partition was given up: its changelog lag is no longer this instance's to show. */
export function partitionReleased(metrics: AudienceMetrics, partition: number): void {
  metrics.changelogLag.remove({ partition: String(partition) });
}
