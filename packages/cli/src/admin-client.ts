// A small typed client of Switchyard's admin HTTP API: one method per route, HTTP only, so it
// can run wherever the API is reachable without any of the services' code.

// The request and response types are not written here: they come from the admin API's OpenAPI
// document (generated/admin-api.ts, `npm run gen:cli-types`), so the client cannot drift from the
// API; tools/gen-cli-types.test.ts fails when the generated file is stale.
import type { components, paths } from './generated/admin-api.js';

type Schemas = components['schemas'];
type Operation<P extends keyof paths, M extends keyof paths[P]> = paths[P][M];
/** The JSON body a route takes. */
type RequestJson<P extends keyof paths, M extends keyof paths[P]> =
  Operation<P, M> extends { requestBody?: { content: { 'application/json': infer B } } } ? B : never;
/** The JSON body a route answers with, for one status. */
type ResponseJson<P extends keyof paths, M extends keyof paths[P], S extends number> =
  Operation<P, M> extends { responses: { [K in S]: { content: { 'application/json': infer R } } } } ? R : never;
/** A route's query parameters. */
type Query<P extends keyof paths, M extends keyof paths[P]> =
  Operation<P, M> extends { parameters: { query?: infer Q } } ? NonNullable<Q> : never;

export type Source = Schemas['Source'];
export type SourceList = ResponseJson<'/v1/sources', 'get', 200>;
export type CreateSourceInput = RequestJson<'/v1/sources', 'post'>;
export type UpdateSourceInput = RequestJson<'/v1/sources/{id}', 'patch'>;
export type WriteKeyCreated = ResponseJson<'/v1/sources/{id}/write-keys', 'post', 201>;

/** A webhooks destination as the API returns it: a set shared secret is masked as "********". */
export type Destination = Schemas['Destination'];
export type DestinationList = ResponseJson<'/v1/destinations', 'get', 200>;
export type CreateDestinationInput = RequestJson<'/v1/destinations', 'post'>;
/** A field left out stays unchanged; `sharedSecret: null` removes the secret, `filter: null` the filter. */
export type UpdateDestinationInput = RequestJson<'/v1/destinations/{id}', 'patch'>;
/** A webhook as sent to the API: headers are optional there. */
export type WebhookInput = CreateDestinationInput['settings']['webhooks'][number];
/** A webhook as the API returns it. */
export type Webhook = Destination['settings']['webhooks'][number];
/**
 * A destination's event filter, as JSON: `{types?, events?, where?}`. The API validates it and says
 * where it is wrong (INVALID_FILTER, field e.g. `filter.where.and[1].value`).
 */
export type DestinationFilter = NonNullable<Destination['filter']>;

/** A Standard Webhooks secret as listed: never its value. */
export type SigningSecretInfo = Schemas['SigningSecretInfo'];
/** A secret with its value: shown once, by the request that made it. */
export type SigningSecretValue = Schemas['SigningSecretValue'];
export type SecretRotationInput = RequestJson<'/v1/destinations/{id}/secrets/rotate', 'post'>;
export type SecretRotated = ResponseJson<'/v1/destinations/{id}/secrets/rotate', 'post', 201>;

/** A replay of a time range into one destination, as GET …/replays/{id} shows it. */
export type ReplayStatus = Schemas['Replay'];
export type ReplayInput = RequestJson<'/v1/destinations/{id}/replays', 'post'>;
export type ReplayList = ResponseJson<'/v1/destinations/{id}/replays', 'get', 200>;

/** A delivery that failed for good, as the API shows it. */
export type DeadLetter = Schemas['DeadLetter'];
/** One dead letter with the exact JSON text that was being delivered. */
export type DeadLetterDetail = Schemas['DeadLetterDetail'];
export type DeadLetterList = ResponseJson<'/v1/dead-letters', 'get', 200>;
export type DeadLetterFilter = Query<'/v1/dead-letters', 'get'>;
export type ReplayResult = ResponseJson<'/v1/dead-letters/replay', 'post', 202>;

/** An endpoint that receives Switchyard's own notifications (a destination failing or disabled, dead letters, replays). */
export type NotificationEndpoint = Schemas['NotificationEndpoint'];
export type NotificationEndpointList = ResponseJson<'/v1/notification-endpoints', 'get', 200>;
export type CreateNotificationEndpointInput = RequestJson<'/v1/notification-endpoints', 'post'>;
/** A notification event type: `destination.failing`, `destination.disabled`, … */
export type NotificationEventType = CreateNotificationEndpointInput['eventTypes'][number];
/** An endpoint just made, with its `whsec_` secret: shown once, by the request that made it. */
export type NotificationEndpointCreated = ResponseJson<'/v1/notification-endpoints', 'post', 201>;

export type DeletionRequestInput = RequestJson<'/v1/deletions', 'post'>;
export type DeletionRequest = ResponseJson<'/v1/deletions', 'post', 202>;

/**
 * An audience condition, as JSON: the API validates it and reports where it is wrong
 * (INVALID_CONDITION, field e.g. `condition.and[1].count.value`).
 */
export type AudienceCondition = Schemas['Audience']['condition'];
export type Audience = Schemas['Audience'];
export type AudienceList = ResponseJson<'/v1/audiences', 'get', 200>;
export type CreateAudienceInput = RequestJson<'/v1/audiences', 'post'>;
export type UpdateAudienceInput = RequestJson<'/v1/audiences/{id}', 'patch'>;

/** A computed trait definition, as JSON: `{"kind": "event_count" | "last_seen" | "latest_property", ...}`. */
export type ComputedTraitDefinition = Schemas['ComputedTrait']['definition'];
export type ComputedTrait = Schemas['ComputedTrait'];
export type ComputedTraitList = ResponseJson<'/v1/computed-traits', 'get', 200>;
export type CreateComputedTraitInput = RequestJson<'/v1/computed-traits', 'post'>;

/** An admin API token as listed: never its value. */
export type Token = Schemas['Token'];
/** A token just made, with its value: shown once, by the request that made it. */
export type TokenCreated = Schemas['TokenCreated'];
export type TokenList = ResponseJson<'/v1/tokens', 'get', 200>;
export type CreateTokenInput = RequestJson<'/v1/tokens', 'post'>;

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
  rotateSigningSecret(id: string, input: SecretRotationInput = {}): Promise<SecretRotated> {
    return this.#request('POST', `/v1/destinations/${seg(id)}/secrets/rotate`, input);
  }

  startReplay(destinationId: string, input: ReplayInput): Promise<ReplayStatus> {
    return this.#request('POST', `/v1/destinations/${seg(destinationId)}/replays`, input);
  }

  getReplay(destinationId: string, replayId: string): Promise<ReplayStatus> {
    return this.#request('GET', `/v1/destinations/${seg(destinationId)}/replays/${seg(replayId)}`);
  }

  listReplays(destinationId: string): Promise<ReplayList> {
    return this.#request('GET', `/v1/destinations/${seg(destinationId)}/replays`);
  }

  cancelReplay(destinationId: string, replayId: string): Promise<ReplayStatus> {
    return this.#request('DELETE', `/v1/destinations/${seg(destinationId)}/replays/${seg(replayId)}`);
  }

  async deleteDestination(id: string): Promise<void> {
    await this.#request('DELETE', `/v1/destinations/${seg(id)}`);
  }

  /** The answer is the only time the endpoint's signing secret is shown. */
  createNotificationEndpoint(input: CreateNotificationEndpointInput): Promise<NotificationEndpointCreated> {
    return this.#request('POST', '/v1/notification-endpoints', input);
  }

  listNotificationEndpoints(): Promise<NotificationEndpointList> {
    return this.#request('GET', '/v1/notification-endpoints');
  }

  getNotificationEndpoint(id: string): Promise<NotificationEndpoint> {
    return this.#request('GET', `/v1/notification-endpoints/${seg(id)}`);
  }

  async deleteNotificationEndpoint(id: string): Promise<void> {
    await this.#request('DELETE', `/v1/notification-endpoints/${seg(id)}`);
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

  /** The answer is the only time the token is shown. */
  createToken(input: CreateTokenInput): Promise<TokenCreated> {
    return this.#request('POST', '/v1/tokens', input);
  }

  listTokens(): Promise<TokenList> {
    return this.#request('GET', '/v1/tokens');
  }

  /** Every control instance refuses it within a second or two. */
  async revokeToken(id: string): Promise<void> {
    await this.#request('DELETE', `/v1/tokens/${seg(id)}`);
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
