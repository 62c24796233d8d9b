import { createHash, timingSafeEqual } from 'node:crypto';
import type { AdminToken, Audience, ComputedTrait, Destination, Source } from '../schemas/generated.js';

export type { AdminToken, Audience, ComputedTrait, Destination, Source };

/** Keys of the compacted config topic: `<kind>:<id>`. */
const KINDS = ['source', 'destination', 'audience', 'computed-trait', 'admin-token'] as const;
type Kind = (typeof KINDS)[number];

export const configKey = {
  source: (id: string) => `source:${id}`,
  destination: (id: string) => `destination:${id}`,
  audience: (id: string) => `audience:${id}`,
  computedTrait: (id: string) => `computed-trait:${id}`,
  adminToken: (id: string) => `admin-token:${id}`,
  parse(key: string): { kind: Kind; id: string } | undefined {
    const i = key.indexOf(':');
    const kind = key.slice(0, i) as Kind;
    return i > 0 && KINDS.includes(kind) ? { kind, id: key.slice(i + 1) } : undefined;
  },
};

export type ConfigRecord =
  | { kind: 'source'; value: Source }
  | { kind: 'destination'; value: Destination }
  | { kind: 'audience'; value: Audience }
  | { kind: 'computed-trait'; value: ComputedTrait }
  | { kind: 'admin-token'; value: AdminToken };

function digest(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}

/**
 * The current sources and destinations, built by applying config-topic records in order. Pure and
 * in memory: every lookup the hot paths make (write key → source, source → enabled destinations)
 * is O(1). Write keys are indexed by their SHA-256, and the candidate is compared with
 * timingSafeEqual, so response time tells nothing about how much of a guessed key was right.
 */
export class ConfigState {
  private readonly sourcesById = new Map<string, Source>();
  private readonly destinationsById = new Map<string, Destination>();
  private readonly destinationIdsBySource = new Map<string, Set<string>>();
  private readonly writeKeys = new Map<string, { sourceId: string; key: Buffer }>();
  private readonly audiencesById = new Map<string, Audience>();
  private readonly computedTraitsById = new Map<string, ComputedTrait>();
  private readonly adminTokensById = new Map<string, AdminToken>();
  /** Admin tokens by the hex SHA-256 of the token (only the hash is ever stored). */
  private readonly adminTokensByHash = new Map<string, AdminToken>();
  /** Increments on every applied record. */
  version = 0;

  /** Applies one record; `null` is a tombstone (the key was deleted). */
  apply(key: string, record: ConfigRecord | null): void {
    const parsed = configKey.parse(key);
    if (!parsed) return;
    this.version++;
    if (parsed.kind === 'source') this.setSource(parsed.id, record?.kind === 'source' ? record.value : null);
    else if (parsed.kind === 'destination') this.setDestination(parsed.id, record?.kind === 'destination' ? record.value : null);
    else if (parsed.kind === 'audience') setOrDelete(this.audiencesById, parsed.id, record?.kind === 'audience' ? record.value : null);
    else if (parsed.kind === 'admin-token') this.setAdminToken(parsed.id, record?.kind === 'admin-token' ? record.value : null);
    else setOrDelete(this.computedTraitsById, parsed.id, record?.kind === 'computed-trait' ? record.value : null);
  }

  audience(id: string): Audience | undefined { return this.audiencesById.get(id); }
  audiences(): Audience[] { return [...this.audiencesById.values()]; }
  computedTrait(id: string): ComputedTrait | undefined { return this.computedTraitsById.get(id); }
  computedTraits(): ComputedTrait[] { return [...this.computedTraitsById.values()]; }

  adminToken(id: string): AdminToken | undefined { return this.adminTokensById.get(id); }
  adminTokens(): AdminToken[] { return [...this.adminTokensById.values()]; }

  /**
   * The admin token whose SHA-256 is `hash` (32 bytes). The map is keyed by the hex digest, and the
   * stored digest is compared again with timingSafeEqual, as write keys are.
   */
  adminTokenByHash(hash: Buffer): AdminToken | undefined {
    const token = this.adminTokensByHash.get(hash.toString('hex'));
    if (!token) return undefined;
    const stored = Buffer.from(token.tokenHash, 'hex');
    return stored.length === hash.length && timingSafeEqual(stored, hash) ? token : undefined;
  }

  source(id: string): Source | undefined { return this.sourcesById.get(id); }
  sources(): Source[] { return [...this.sourcesById.values()]; }
  destination(id: string): Destination | undefined { return this.destinationsById.get(id); }
  destinations(): Destination[] { return [...this.destinationsById.values()]; }

  destinationsOfSource(sourceId: string): Destination[] {
    const ids = this.destinationIdsBySource.get(sourceId);
    return ids ? [...ids].map((id) => this.destinationsById.get(id)!).filter(Boolean) : [];
  }

  /** Enabled webhooks destinations of an enabled source: where its events go. */
  enabledWebhooksOf(sourceId: string): Destination[] {
    if (!this.sourcesById.get(sourceId)?.enabled) return [];
    return this.destinationsOfSource(sourceId).filter((d) => d.enabled && d.type === 'webhooks');
  }

  /** The source a write key belongs to (enabled or not: callers decide what disabled means). */
  sourceForWriteKey(writeKey: string): Source | undefined {
    const entry = this.writeKeys.get(digest(writeKey));
    if (!entry) return undefined;
    const candidate = Buffer.from(writeKey);
    if (candidate.length !== entry.key.length || !timingSafeEqual(candidate, entry.key)) return undefined;
    return this.sourcesById.get(entry.sourceId);
  }

  private setSource(id: string, value: Source | null): void {
    const previous = this.sourcesById.get(id);
    for (const key of previous?.writeKeys ?? []) this.writeKeys.delete(digest(key));
    if (!value) { this.sourcesById.delete(id); return; }
    this.sourcesById.set(id, value);
    for (const key of value.writeKeys) this.writeKeys.set(digest(key), { sourceId: id, key: Buffer.from(key) });
  }

  private setAdminToken(id: string, value: AdminToken | null): void {
    const previous = this.adminTokensById.get(id);
    if (previous) this.adminTokensByHash.delete(previous.tokenHash);
    if (!value) { this.adminTokensById.delete(id); return; }
    this.adminTokensById.set(id, value);
    this.adminTokensByHash.set(value.tokenHash, value);
  }

  private setDestination(id: string, value: Destination | null): void {
    const previous = this.destinationsById.get(id);
    if (previous) this.destinationIdsBySource.get(previous.sourceId)?.delete(id);
    if (!value) { this.destinationsById.delete(id); return; }
    this.destinationsById.set(id, value);
    let ids = this.destinationIdsBySource.get(value.sourceId);
    if (!ids) this.destinationIdsBySource.set(value.sourceId, (ids = new Set()));
    ids.add(id);
  }
}

function setOrDelete<T>(map: Map<string, T>, id: string, value: T | null): void {
  if (value === null) map.delete(id);
  else map.set(id, value);
}
