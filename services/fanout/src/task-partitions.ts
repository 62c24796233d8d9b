import { murmur2 } from '@switchyard/platform/kafka/partitioner';

/** The partition counts of the topics fan-out reads and writes, read when it starts. */
export interface PartitionLayout {
  ingest: number;
  delivery: number;
}

/**
 * The delivery partition of a task: one only its ingest partition's transactions write.
 *
 * Keyed by destination and user, the tasks of every ingest partition's transaction landed in every
 * delivery partition. A read_committed reader stops at a partition's first record of a transaction
 * still open, so a committed task waited for every other partition's transaction that had begun
 * before it, and each transaction wrote a commit marker to every delivery partition. Kept apart,
 * delivery partition p is written by ingest partition p's transactions alone, one after another.
 *
 * Order holds as before: one user of a source is one ingest partition (its key), so its tasks for
 * a destination are one delivery partition. With more delivery partitions than ingest partitions,
 * an ingest partition owns every delivery partition p with p ≡ it (mod the ingest count), and the
 * task's key picks among them; with fewer, several ingest partitions share one.
 */
export function taskPartition(layout: PartitionLayout, ingestPartition: number, key: string): number {
  const { ingest, delivery } = layout;
  if (delivery <= ingest) return ingestPartition % delivery;
  const first = ingestPartition % ingest;
  const owned = Math.ceil((delivery - first) / ingest);
  return first + ((murmur2(key) & 0x7fffffff) % owned) * ingest;
}
