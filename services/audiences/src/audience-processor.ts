import { randomUUID } from 'node:crypto';
import type { AvroCodec } from '@switchyard/platform/codec/avro-codec';
import { RegistryUnavailableError } from '@switchyard/platform/errors';
import type { ConfigState } from '@switchyard/platform/config-view/config-state';
import type { ConsumerClient } from '@switchyard/platform/consuming/consumer-client';
import { ConsumerRunner } from '@switchyard/platform/consuming/consumer-runner';
import type { TopicNames } from '@switchyard/platform/kafka/topics';
import { uncommittedRecords, type PartitionLease, type PartitionTransactions } from '@switchyard/platform/exactly-once/partition-transactions';
import { originHeaders } from '@switchyard/platform/kafka/record-origin';
import type { Logger } from '@switchyard/platform/logger';
import type { AudienceUserState, Identify } from '@switchyard/platform/schemas/generated';
import type { AudienceMetrics } from './audience-metrics.js';
import { definitionsOf, type SourceDefinitions } from './definitions.js';
import { initialSync, membershipChanges } from './membership.js';
import { applyIdentify, applyTrack, emptyUserState, parseUserState, pruneCounters, serializeUserState, type UserState } from '@switchyard/platform/audiences/user-state';

/** How often a batch that waits (for a restore, a sync ahead of it) keeps the group membership alive. */
const HEARTBEAT_WHILE_BUSY_MS = 1000;
/**
 * A batch holding a record whose writer schema the registry did not answer for (restarting, say)
 * is read again this much later; the other partitions go on meanwhile.
 */
const REGISTRY_RETRY_MS = 1000;
/** At most one "registry did not answer" line per this long. */
const REGISTRY_LOG_MS = 5000;

/** Identify calls this processor writes carry this library name, so it never reads its own output as input. */
export const EMITTER = 'switchyard-audiences';

interface UserEntry {
  sourceId: string;
  userId: string | null;
  anonymousId: string | null;
  version: number;
  partition: number;
  state: UserState;
}

type Out = { topic: string; key: string; value: Buffer | null; headers?: Readonly<Record<string, string>> };

export interface ProcessorDeps {
  /**
   * One transactional producer per ingest partition: a partition's emitted identify calls, changelog
   * records and consumed offset commit together, and a new owner fences the previous one.
   */
  transactions: Pick<PartitionTransactions, 'withPartition' | 'assign'>;
  codec: AvroCodec;
  config: ConfigState;
  topics: TopicNames;
  metrics: AudienceMetrics;
  logger: Logger;
  clock: () => number;
}

/**
 * The audiences stream processor. State per user (traits, event timestamps, memberships, computed
 * values) lives in memory and in a compacted changelog topic partitioned like the ingest topic.
 * Every change of state, every identify call it causes, and the ingest offsets that caused them
 * commit in one Kafka transaction: after a crash the state, the emitted calls and the position agree,
 * so nothing is forgotten and nothing is sent twice. A user's state, changelog records and identify
 * calls all live in the user's ingest partition, so each partition commits under its own
 * transactional id; before an instance works on a partition it fences it in and restores the
 * partition's changelog to its end (main.ts), so it starts from the previous owner's last commit,
 * and it forgets the partition's users when it gives the partition up.
 * Work (batches, syncs, backfills) is serialised: one transaction at a time.
 */
export class AudienceProcessor {
  private readonly users = new Map<string, UserEntry>();
  private readonly owned = new Set<number>();
  private queue: Promise<unknown> = Promise.resolve();
  private readonly known = new Set<string>();
  private registryLoggedAt = 0;

  constructor(private readonly deps: ProcessorDeps) {}

  /** Applies a changelog record (the restore of a partition fenced in); older versions never win. */
  applyChangelog(key: string, partition: number, value: AudienceUserState | null): void {
    if (value === null) { this.users.delete(key); return; }
    const current = this.users.get(key);
    if (current && current.version >= value.version) return;
    this.users.set(key, { sourceId: value.sourceId, userId: value.userId, anonymousId: value.anonymousId, version: value.version, partition, state: parseUserState(value.state) });
    this.deps.metrics.users.set(this.users.size);
  }

  /** Forgets the users of a partition this instance gave up: memory holds only owned partitions' users. */
  dropPartition(partition: number): void {
    for (const [key, entry] of this.users) if (entry.partition === partition) this.users.delete(key);
    this.deps.metrics.users.set(this.users.size);
  }

  /** Remembers the audiences that exist at start; later ones get a backfill. */
  markKnownAudiences(): void {
    for (const a of this.deps.config.audiences()) this.known.add(a.id);
  }

  /**
   * The runner the processor reads ingest with, from its first record where the group has no
   * offset; batches commit their offsets in their transactions. Partitions assigned to this
   * instance are fenced in (and their state restored) before their first batch; lost ones given up.
   */
  runner(client: ConsumerClient): ConsumerRunner {
    const { topics, transactions, logger } = this.deps;
    return new ConsumerRunner({
      client, topics: [topics.ingest], from: 'earliest', commits: 'transactional', logger,
      onAssigned: (assignment) => {
        const assigned = assignment.byTopic[topics.ingest] ?? [];
        this.owned.clear();
        for (const p of assigned) this.owned.add(p);
        transactions.assign(assigned);
      },
    });
  }

  /** Reads through `runner` (made by runner() above); resolves once running. */
  async start(runner: ConsumerRunner): Promise<void> {
    await runner.start(async (batch, ctx) => {
      if (batch.messages.length === 0 || !ctx.current()) return;
      // Restoring a partition just fenced in can take longer than the session timeout; the client
      // heartbeats only between batches unless asked.
      const beating = setInterval(() => void ctx.heartbeat().catch(() => undefined), HEARTBEAT_WHILE_BUSY_MS);
      try {
        await this.serialised(() => this.deps.transactions.withPartition(batch.partition, async (lease) => {
          const messages = uncommittedRecords(batch, lease, (to) => runner.seek(to));
          if (messages.length) await this.processBatch(lease, messages, batch.lastOffset());
        }));
      } catch (err) {
        if (!(err instanceof RegistryUnavailableError)) throw err;
        // The transaction was aborted: the batch is read again later from its first record.
        this.registryUnavailable(err, batch.partition);
        runner.readAgainLater({ topic: batch.topic, partition: batch.partition, offset: batch.messages[0]!.offset }, REGISTRY_RETRY_MS);
        return;
      } finally {
        clearInterval(beating);
      }
      await ctx.heartbeat();
    });
  }

  private registryUnavailable(err: RegistryUnavailableError, partition: number): void {
    const now = this.deps.clock();
    if (now - this.registryLoggedAt < REGISTRY_LOG_MS) return;
    this.registryLoggedAt = now;
    this.deps.logger.warn({ err, partition }, 'the schema registry did not answer; the batch is read again once it does');
  }

  /** Emits `false` for memberships whose time windows expired (and computed values that changed). */
  sync(): Promise<void> {
    return this.serialised(async () => {
      const end = this.deps.metrics.syncSeconds.startTimer({ kind: 'sync' });
      await this.eachOwnedPartition(async (lease) => {
        const now = this.deps.clock();
        const out: Out[] = [];
        const pending = new Map<string, UserEntry | null>();
        for (const [key, entry] of this.users) {
          if (entry.partition !== lease.partition) continue;
          const defs = definitionsOf(this.deps.config, entry.sourceId);
          if (defs.audiences.length === 0 && defs.traits.length === 0) continue;
          this.evaluate(key, { ...entry, state: pruneCounters(entry.state, defs.specs, now) }, defs, now, out, pending);
        }
        await this.commit(lease, out, pending);
      });
      end();
    });
  }

  /** On creation, one identify with `true` for every current member of the new audiences, nothing for others. */
  backfillNewAudiences(): Promise<void> {
    const fresh = this.deps.config.audiences().filter((a) => !this.known.has(a.id));
    if (fresh.length === 0) return Promise.resolve();
    for (const a of fresh) this.known.add(a.id);
    return this.serialised(async () => {
      const end = this.deps.metrics.syncSeconds.startTimer({ kind: 'backfill' });
      await this.eachOwnedPartition(async (lease) => {
        const now = this.deps.clock();
        const out: Out[] = [];
        const pending = new Map<string, UserEntry | null>();
        for (const audienceDef of fresh) {
          const defs = definitionsOf(this.deps.config, audienceDef.sourceId);
          const audience = defs.audiences.find((a) => a.id === audienceDef.id);
          if (!audience) continue;
          for (const [key, stored] of this.users) {
            const entry = pending.get(key) ?? stored;
            if (entry.sourceId !== audienceDef.sourceId || entry.partition !== lease.partition) continue;
            if (entry.state.memberships[audience.id] !== undefined) continue;
            const { emit, next } = initialSync(pruneCounters(entry.state, defs.specs, now), audience, now);
            const updated = { ...entry, state: next, version: entry.version + 1 };
            pending.set(key, updated);
            out.push(this.changelogRecord(key, updated, now));
            if (emit) {
              out.push(this.identifyRecord(key, updated, { [audience.propertyName]: true }, now));
              this.deps.metrics.changes.inc({ audience: audience.id, member: 'true' });
            }
          }
        }
        await this.commit(lease, out, pending);
      });
      end();
    });
  }

  /** Each partition this instance owns in turn, under its lease: one transaction per partition. */
  private async eachOwnedPartition(work: (lease: PartitionLease) => Promise<void>): Promise<void> {
    for (const partition of [...this.owned].sort((a, b) => a - b)) {
      await this.deps.transactions.withPartition(partition, work);
    }
  }

  private async processBatch(lease: PartitionLease, messages: Array<{ key: Buffer | null; value: Buffer | null; offset: string }>, lastOffset: string): Promise<void> {
    const partition = lease.partition;
    const now = this.deps.clock();
    const out: Out[] = [];
    // Changes apply to memory only once their transaction committed: an aborted batch is read again.
    const pending = new Map<string, UserEntry | null>();
    for (const message of messages) {
      this.deps.metrics.consumed.inc();
      const key = message.key?.toString('utf8');
      if (!key) continue;
      let decoded;
      try {
        decoded = await this.deps.codec.decode(message.value);
      } catch (err) {
        if (err instanceof RegistryUnavailableError) throw err; // the record may be fine: the batch is read again
        continue; // fan-out sets such records aside
      }
      const event = decoded.value as { sourceId: string; userId: string | null; anonymousId: string | null; context: string | null; timestamp: number };
      if (emittedByUs(event.context)) continue;
      if (decoded.name === 'io.switchyard.event.Delete') {
        // A deletion request: the user's state goes too.
        if (this.users.has(key) || pending.get(key)) { pending.set(key, null); out.push({ topic: this.deps.topics.audiencesState, key, value: null }); }
        continue;
      }
      if (decoded.name !== 'io.switchyard.event.Identify' && decoded.name !== 'io.switchyard.event.Track') continue;
      const defs = definitionsOf(this.deps.config, event.sourceId);
      const known = pending.has(key) ? pending.get(key) : this.users.get(key);
      const current = known ?? { sourceId: event.sourceId, userId: event.userId, anonymousId: event.anonymousId, version: 0, partition, state: emptyUserState() };
      const entry: UserEntry = { ...current, partition, userId: event.userId ?? current.userId, anonymousId: current.anonymousId ?? event.anonymousId };
      if (decoded.name === 'io.switchyard.event.Identify') {
        entry.state = applyIdentify(entry.state, parseObject(decoded.value.traits), now);
      } else {
        entry.state = applyTrack(entry.state, { event: decoded.value.event, properties: parseObject(decoded.value.properties), timestamp: event.timestamp }, defs.specs, now);
      }
      this.evaluate(key, entry, defs, now, out, pending, true);
    }
    await this.commit(lease, out, pending, (BigInt(lastOffset) + 1n).toString());
  }

  /** Applies the membership decision to one user, queueing the identify call and the changelog record. */
  private evaluate(key: string, entry: UserEntry, defs: SourceDefinitions, now: number, out: Out[], pending: Map<string, UserEntry | null>, stateChanged = false): void {
    const { traits, next } = membershipChanges(entry.state, defs.audiences, defs.traits, now);
    const emitted = Object.keys(traits).length > 0;
    if (!emitted && !stateChanged) return;
    const updated = { ...entry, state: next, version: entry.version + 1 };
    pending.set(key, updated);
    out.push(this.changelogRecord(key, updated, now));
    if (emitted) {
      out.push(this.identifyRecord(key, updated, traits, now));
      for (const a of defs.audiences) if (a.propertyName in traits) this.deps.metrics.changes.inc({ audience: a.id, member: String(traits[a.propertyName]) });
      for (const t of defs.traits) if (t.name in traits) this.deps.metrics.traitChanges.inc({ trait: t.id });
    }
  }

  private changelogRecord(key: string, entry: UserEntry, now: number): Out {
    return {
      topic: this.deps.topics.audiencesState, key,
      value: this.deps.codec.encode('io.switchyard.pipeline.AudienceUserState', {
        sourceId: entry.sourceId, userId: entry.userId, anonymousId: entry.anonymousId, version: entry.version, state: serializeUserState(entry.state), updatedAt: now,
      }),
    };
  }

  private identifyRecord(key: string, entry: UserEntry, traits: Record<string, unknown>, now: number): Out {
    const identify: Identify = {
      messageId: `aud-${randomUUID()}`, sourceId: entry.sourceId, userId: entry.userId, anonymousId: entry.userId ? null : entry.anonymousId,
      traits: JSON.stringify(traits), timestamp: now, originalTimestamp: null, sentAt: null, receivedAt: now,
      context: JSON.stringify({ library: { name: EMITTER, version: '1.0.0' } }), integrations: null,
    };
    // Marked as audiences': fan-out does not take it for a direct record to check and count.
    return { topic: this.deps.topics.ingest, key, value: this.deps.codec.encode('io.switchyard.event.Identify', identify), headers: originHeaders.audiences };
  }

  private async commit(lease: PartitionLease, out: Out[], pending: Map<string, UserEntry | null>, nextOffset?: string): Promise<void> {
    if (out.length === 0 && nextOffset === undefined) return;
    await lease.commit(out, nextOffset);
    for (const [key, entry] of pending) {
      if (entry === null) this.users.delete(key);
      else this.users.set(key, entry);
    }
    this.deps.metrics.users.set(this.users.size);
  }

  private serialised<T>(work: () => Promise<T>): Promise<T> {
    const run = this.queue.then(work, work);
    this.queue = run.catch((err: unknown) => { if (!(err instanceof RegistryUnavailableError)) this.deps.logger.error({ err }, 'audiences work failed'); });
    return run;
  }
}

function emittedByUs(context: string | null): boolean {
  return context !== null && context.includes(EMITTER) && parseObject(context).library !== undefined && (parseObject(context).library as { name?: string }).name === EMITTER;
}

function parseObject(text: string | null): Record<string, unknown> {
  if (!text) return {};
  try {
    const v: unknown = JSON.parse(text);
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}
