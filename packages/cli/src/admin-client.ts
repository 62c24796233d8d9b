// A small typed client of Switchyard's admin HTTP API: one method per route, HTTP only, so it
// can run wherever the API is reachable without any of the services' code.

export interface Source {
  id: string;
  name: string;
  enabled: boolean;
  writeKeys: string[];
  createdAt: string;
  updatedAt: string;
}

export interface SourceList {
  sources: Source[];
}

export interface CreateSourceInput {
  name: string;
  enabled?: boolean;
}

export interface UpdateSourceInput {
  name?: string;
  enabled?: boolean;
}

export interface WriteKeyCreated {
  writeKey: string;
  source: Source;
}

/** A webhook as sent to the API: headers are optional there. */
export interface WebhookInput {
  url: string;
  headers?: Record<string, string>;
}

/** A webhook as the API returns it. */
export interface Webhook {
  url: string;
  headers: Record<string, string>;
}

export interface Destination {
  id: string;
  sourceId: string;
  name?: string | null;
  type: 'webhooks';
  enabled: boolean;
  /** The API masks a set secret as "********". */
  settings: { sharedSecret: string | null; webhooks: Webhook[] };
  /** Which calls it gets; null: every call. */
  filter?: DestinationFilter | null;
  /** Standard Webhooks signing; `newSecret` only in the response that generated it. */
  signing?: { standard: boolean; secrets: SigningSecretInfo[]; newSecret?: SigningSecretValue };
  createdAt: string;
  updatedAt: string;
}

/**
 * A destination's event filter, as JSON: `{types?, events?, where?}`. The API validates it and says
 * where it is wrong (INVALID_FILTER, field e.g. `filter.where.and[1].value`).
 */
export type DestinationFilter = Record<string, unknown>;

/** A Standard Webhooks secret as listed: never its value. */
export interface SigningSecretInfo {
  id: string;
  createdAt: string;
  /** When it stops signing (a rotation's grace period); null for the current one. */
  expiresAt: string | null;
}

/** A secret with its value: shown once, by the request that made it. */
export interface SigningSecretValue {
  id: string;
  secret: string;
  createdAt: string;
}

export interface SecretRotated {
  signingSecret: SigningSecretValue;
  destination: Destination;
}

/** A replay of a time range into one destination, as GET …/replays/{id} shows it. */
export interface ReplayStatus {
  id: string;
  destinationId: string;
  state: 'running' | 'done' | 'cancelled' | 'failed';
  from: string;
  to: string;
  filter: DestinationFilter | null;
  rate: number;
  createdAt: string;
  cancelRequestedAt: string | null;
  total: number | null;
  scanned: number;
  matched: number;
  enqueued: number;
  progress: number;
  recordsPerSecond: number | null;
  etaSeconds: number | null;
  updatedAt: string | null;
  error: string | null;
  notReplayable: Array<{ partition: number; from: string; to: string }>;
}

export interface ReplayInput {
  from: string;
  to: string;
  filter?: DestinationFilter;
  rate?: number;
}

export interface DestinationList {
  destinations: Destination[];
}

export interface CreateDestinationInput {
  sourceId: string;
  name?: string;
  type: 'webhooks';
  enabled?: boolean;
  settings: { sharedSecret?: string | null; webhooks: WebhookInput[] };
  filter?: DestinationFilter;
  signing?: { standard: boolean };
}

/** A field left out stays unchanged; `sharedSecret: null` removes the secret. */
export interface UpdateDestinationInput {
  name?: string;
  enabled?: boolean;
  settings?: { sharedSecret?: string | null; webhooks?: WebhookInput[] };
  /** null removes the filter. */
  filter?: DestinationFilter | null;
  signing?: { standard: boolean };
}

/** A delivery that failed for good, as the API shows it. */
export interface DeadLetter {
  id: string;
  reason: string;
  /** The last HTTP status the webhook answered, or null when there was no answer. */
  status: number | null;
  responseExcerpt: string | null;
  error: string | null;
  /** ISO time. */
  failedAt: string;
  destinationId: string;
  sourceId: string;
  messageId: string;
  eventType: string;
  attempts: number;
  /** ISO time of the last replay, or null if it was never replayed. */
  replayedAt: string | null;
}

/** One dead letter with the exact JSON text that was being delivered. */
export interface DeadLetterDetail extends DeadLetter {
  body: string;
}

export interface DeadLetterList {
  /** Newest first. */
  deadLetters: DeadLetter[];
  /** How many match the filter, before the limit. */
  total: number;
}

export interface DeadLetterFilter {
  destinationId?: string;
  reason?: string;
  /** ISO time with an offset, e.g. 2025-01-02T03:04:05.000Z. */
  since?: string;
  limit?: number;
}

export interface ReplayResult {
  replayed: string[];
  notFound: string[];
}

export interface DeletionRequestInput {
  userId: string;
  /** Only these sources; all of them when left out. */
  sourceIds?: string[];
}

export interface DeletionRequest {
  requestId: string;
  userId: string;
  notifications: number;
  sourceIds: string[];
}

/**
 * An audience condition, as JSON: the API validates it and reports where it is wrong
 * (INVALID_CONDITION, field e.g. `condition.and[1].count.value`).
 */
export type AudienceCondition = Record<string, unknown>;

export interface Audience {
  id: string;
  sourceId: string;
  name: string;
  /** The user property the membership is written to: the snake_case of the name. */
  property: string;
  condition: AudienceCondition;
  createdAt: string;
  updatedAt: string;
}

export interface AudienceList {
  audiences: Audience[];
}

export interface CreateAudienceInput {
  sourceId: string;
  name: string;
  condition: AudienceCondition;
}

export interface UpdateAudienceInput {
  condition: AudienceCondition;
}

/** A computed trait definition, as JSON: `{"kind": "event_count" | "last_seen" | "latest_property", ...}`. */
export type ComputedTraitDefinition = Record<string, unknown>;

export interface ComputedTrait {
  id: string;
  sourceId: string;
  name: string;
  /** The user trait the value is written to: the snake_case of the name. */
  trait: string;
  definition: ComputedTraitDefinition;
  createdAt: string;
  updatedAt: string;
}

export interface ComputedTraitList {
  computedTraits: ComputedTrait[];
}

export interface CreateComputedTraitInput {
  sourceId: string;
  name: string;
  definition: ComputedTraitDefinition;
}

/** The API answered with a non-2xx status (or a 2xx body that is not JSON). */
export class AdminApiError extends Error {
  readonly status: number;
  readonly code: string;
  readonly field: string | undefined;

  constructor(status: number, code: string, message: string, field?: string) {
    super(message);
    this.name = 'AdminApiError';
    this.status = status;
    this.code = code;
    this.field = field;
  }
}

/** The API could not be reached at all (refused, DNS, timeout): there is no status to report. */
export class AdminConnectionError extends Error {
  readonly code: 'UNREACHABLE' | 'TIMEOUT';

  constructor(code: 'UNREACHABLE' | 'TIMEOUT', message: string, cause: unknown) {
    super(message, { cause });
    this.name = 'AdminConnectionError';
    this.code = code;
  }
}

export interface AdminClientOptions {
  /** Base URL of the admin API, e.g. http://127.0.0.1:8081 (a path prefix is kept). */
  baseUrl: string;
  token: string;
  fetch?: typeof fetch;
  /** Per request; a CLI should fail rather than hang on a stuck server. */
  timeoutMs?: number;
}

const seg = encodeURIComponent;
const sourceQuery = (filter: { sourceId?: string }): string => (filter.sourceId === undefined ? '' : `?sourceId=${seg(filter.sourceId)}`);

export class AdminClient {
  readonly baseUrl: string;
  readonly #token: string;
  readonly #fetch: typeof fetch;
  readonly #timeoutMs: number;

  constructor(opts: AdminClientOptions) {
    this.baseUrl = opts.baseUrl.replace(/\/+$/, '');
    this.#token = opts.token;
    this.#fetch = opts.fetch ?? globalThis.fetch;
    this.#timeoutMs = opts.timeoutMs ?? 30_000;
  }

  createSource(input: CreateSourceInput): Promise<Source> {
    return this.#request('POST', '/v1/sources', input);
  }

  listSources(): Promise<SourceList> {
    return this.#request('GET', '/v1/sources');
  }

  getSource(id: string): Promise<Source> {
    return this.#request('GET', `/v1/sources/${seg(id)}`);
  }

  updateSource(id: string, input: UpdateSourceInput): Promise<Source> {
    return this.#request('PATCH', `/v1/sources/${seg(id)}`, input);
  }

  /** Also deletes the source's destinations. */
  async deleteSource(id: string): Promise<void> {
    await this.#request('DELETE', `/v1/sources/${seg(id)}`);
  }

  addWriteKey(sourceId: string): Promise<WriteKeyCreated> {
    return this.#request('POST', `/v1/sources/${seg(sourceId)}/write-keys`);
  }

  removeWriteKey(sourceId: string, key: string): Promise<Source> {
    return this.#request('DELETE', `/v1/sources/${seg(sourceId)}/write-keys/${seg(key)}`);
  }

  createDestination(input: CreateDestinationInput): Promise<Destination> {
    return this.#request('POST', '/v1/destinations', input);
  }

  listDestinations(filter: { sourceId?: string } = {}): Promise<DestinationList> {
    return this.#request('GET', `/v1/destinations${sourceQuery(filter)}`);
  }

  getDestination(id: string): Promise<Destination> {
    return this.#request('GET', `/v1/destinations/${seg(id)}`);
  }

  updateDestination(id: string, input: UpdateDestinationInput): Promise<Destination> {
    return this.#request('PATCH', `/v1/destinations/${seg(id)}`, input);
  }

  /** A new Standard Webhooks secret; the previous one signs beside it for `gracePeriod` (e.g. 24h). */
  rotateSigningSecret(id: string, input: { gracePeriod?: string } = {}): Promise<SecretRotated> {
    return this.#request('POST', `/v1/destinations/${seg(id)}/secrets/rotate`, input);
  }

  startReplay(destinationId: string, input: ReplayInput): Promise<ReplayStatus> {
    return this.#request('POST', `/v1/destinations/${seg(destinationId)}/replays`, input);
  }

  getReplay(destinationId: string, replayId: string): Promise<ReplayStatus> {
    return this.#request('GET', `/v1/destinations/${seg(destinationId)}/replays/${seg(replayId)}`);
  }

  listReplays(destinationId: string): Promise<{ replays: ReplayStatus[] }> {
    return this.#request('GET', `/v1/destinations/${seg(destinationId)}/replays`);
  }

  cancelReplay(destinationId: string, replayId: string): Promise<ReplayStatus> {
    return this.#request('DELETE', `/v1/destinations/${seg(destinationId)}/replays/${seg(replayId)}`);
  }

  async deleteDestination(id: string): Promise<void> {
    await this.#request('DELETE', `/v1/destinations/${seg(id)}`);
  }

  listDeadLetters(filter: DeadLetterFilter = {}): Promise<DeadLetterList> {
    const params = new URLSearchParams();
    if (filter.destinationId !== undefined) params.set('destinationId', filter.destinationId);
    if (filter.reason !== undefined) params.set('reason', filter.reason);
    if (filter.since !== undefined) params.set('since', filter.since);
    if (filter.limit !== undefined) params.set('limit', String(filter.limit));
    const query = params.toString();
    return this.#request('GET', `/v1/dead-letters${query === '' ? '' : `?${query}`}`);
  }

  getDeadLetter(id: string): Promise<DeadLetterDetail> {
    return this.#request('GET', `/v1/dead-letters/${seg(id)}`);
  }

  /** Re-enqueues the dead letters as fresh delivery tasks; unknown ids come back in notFound. */
  replayDeadLetters(ids: string[]): Promise<ReplayResult> {
    return this.#request('POST', '/v1/dead-letters/replay', { ids });
  }

  requestDeletion(input: DeletionRequestInput): Promise<DeletionRequest> {
    return this.#request('POST', '/v1/deletions', input);
  }

  createAudience(input: CreateAudienceInput): Promise<Audience> {
    return this.#request('POST', '/v1/audiences', input);
  }

  listAudiences(filter: { sourceId?: string } = {}): Promise<AudienceList> {
    return this.#request('GET', `/v1/audiences${sourceQuery(filter)}`);
  }

  getAudience(id: string): Promise<Audience> {
    return this.#request('GET', `/v1/audiences/${seg(id)}`);
  }

  /** Replaces the condition; the name (and so the property) cannot change. */
  updateAudience(id: string, input: UpdateAudienceInput): Promise<Audience> {
    return this.#request('PATCH', `/v1/audiences/${seg(id)}`, input);
  }

  async deleteAudience(id: string): Promise<void> {
    await this.#request('DELETE', `/v1/audiences/${seg(id)}`);
  }

  createComputedTrait(input: CreateComputedTraitInput): Promise<ComputedTrait> {
    return this.#request('POST', '/v1/computed-traits', input);
  }

  listComputedTraits(filter: { sourceId?: string } = {}): Promise<ComputedTraitList> {
    return this.#request('GET', `/v1/computed-traits${sourceQuery(filter)}`);
  }

  getComputedTrait(id: string): Promise<ComputedTrait> {
    return this.#request('GET', `/v1/computed-traits/${seg(id)}`);
  }

  async deleteComputedTrait(id: string): Promise<void> {
    await this.#request('DELETE', `/v1/computed-traits/${seg(id)}`);
  }

  // The type parameter is trusted, not checked: the API is ours and versioned under /v1.
  async #request<T>(method: string, path: string, body?: object): Promise<T> {
    const url = this.baseUrl + path;
    const headers: Record<string, string> = { authorization: `Bearer ${this.#token}`, accept: 'application/json' };
    if (body !== undefined) headers['content-type'] = 'application/json';
    let res: Response;
    try {
      res = await this.#fetch(url, {
        method,
        headers,
        body: body === undefined ? null : JSON.stringify(body),
        signal: AbortSignal.timeout(this.#timeoutMs),
      });
    } catch (err) {
      throw connectionError(err, this.baseUrl, this.#timeoutMs);
    }
    const text = await res.text();
    if (!res.ok) throw apiError(res, text);
    if (res.status === 204 || text === '') return undefined as T;
    try {
      return JSON.parse(text) as T;
    } catch {
      throw new AdminApiError(res.status, 'BAD_RESPONSE', `the admin API answered ${method} ${path} with a body that is not JSON`);
    }
  }
}

function apiError(res: Response, text: string): AdminApiError {
  // Anything in front of the API (a proxy, a load balancer) may answer with a non-JSON body.
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  if (isRecord(parsed) && typeof parsed.code === 'string' && typeof parsed.message === 'string') {
    return new AdminApiError(res.status, parsed.code, parsed.message, typeof parsed.field === 'string' ? parsed.field : undefined);
  }
  const detail = text.trim().slice(0, 200) || res.statusText || 'no details';
  return new AdminApiError(res.status, `HTTP_${res.status}`, detail);
}

function connectionError(err: unknown, baseUrl: string, timeoutMs: number): AdminConnectionError {
  if (err instanceof DOMException && err.name === 'TimeoutError') {
    return new AdminConnectionError('TIMEOUT', `no answer from the admin API at ${baseUrl} within ${timeoutMs} ms`, err);
  }
  // undici reports "fetch failed" and puts the useful part (ECONNREFUSED, ENOTFOUND) in cause.
  const cause = err instanceof Error && err.cause instanceof Error ? err.cause : err;
  const reason = cause instanceof Error ? cause.message : String(cause);
  return new AdminConnectionError('UNREACHABLE', `could not reach the admin API at ${baseUrl}: ${reason}`, err);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
