import { z } from 'zod';
import { retryPolicyLimits } from '@switchyard/platform/destination-retry';
import { AddressPolicy } from '@switchyard/platform/net/address-policy';
import { DEFAULT_RETRY_POLICY } from '@switchyard/platform/retry-schedule';
import { adminErrors } from './admin-errors.js';
import { destinationSchemas, secretRotation, sourceCreate, sourcePatch } from './api-schemas.js';
import { audienceCreate, audiencePatch, computedTraitCreate } from './routes/audiences.js';
import { deadLetterQuery, replayRequest } from './routes/dead-letters.js';
import { deletionRequest } from './routes/deletions.js';
import { replayRequest as rangeReplayRequest } from './routes/replays.js';
import { NOTIFICATION_TYPES, notificationEndpointSchema } from './notification-endpoints.js';
import { SECURITY_DESCRIPTION, tokenPaths, tokenSchemas, withAccess } from './openapi-access.js';

/** What every part of the document is written with: the schemas it derives from, and its shorthands. */
function documentParts() {
  // The document shows the default tiers' limits; a deployment's own come from its SWITCHYARD_RETRY_TIERS.
  const destinations = destinationSchemas(new AddressPolicy([]), retryPolicyLimits(DEFAULT_RETRY_POLICY.tiersMs));
  const body = (schema: z.ZodType) => ({ required: true, content: { 'application/json': { schema: z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) } } });
  const json = (ref: string, description: string) => ({ description, content: { 'application/json': { schema: { $ref: `#/components/schemas/${ref}` } } } });
  const errors = {
    400: json('Error', 'Invalid request: `field` names the offending field'),
    401: json('Error', 'Missing or wrong admin token'),
    404: json('Error', 'No such resource'),
  };
  const idParam = [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }];
  const iso = { type: 'string', format: 'date-time' };
  // A JSON object the API validates elsewhere (a filter, a condition, a definition): any properties.
  const freeForm = (description: string, nullable = false) => ({ type: nullable ? ['object', 'null'] : 'object', additionalProperties: true, description });
  const list = (key: string, ref: string, description: string) => ({ description, content: { 'application/json': { schema: { type: 'object', required: [key], properties: { [key]: { type: 'array', items: { $ref: `#/components/schemas/${ref}` } } } } } } });
  return { destinations, body, json, errors, idParam, iso, freeForm, list };
}

type Parts = ReturnType<typeof documentParts>;

/**
 * The OpenAPI 3.1 document of the admin API, derived from the same zod schemas the routes
 * validate with, so it cannot drift. Served at GET /openapi.json; a copy is kept in
 * services/control/openapi.json (a test checks they match; `npm run gen:openapi` rewrites it).
 */
export function openApiDocument(): Record<string, unknown> {
  const parts = documentParts();
  const { errors, json, list } = parts;
  return withAccess({
    openapi: '3.1.0',
    info: { title: 'Switchyard admin API', version: '1.0.0', description: `Sources, write keys and webhooks destinations. ${SECURITY_DESCRIPTION}` },
    servers: [{ url: 'http://127.0.0.1:8081' }],
    security: [{ bearer: [] }],
    components: {
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer', description: 'SWITCHYARD_ADMIN_TOKEN or a token from POST /v1/tokens; an operation\'s security names the scope it needs (admin, read, metadata)' } },
      schemas: { ...recordSchemas(parts), ...configurationSchemas(parts) },
    },
    paths: { ...sourcePaths(parts), ...destinationPaths(parts), ...audienceAndDeadLetterPaths(parts), '/v1/destinations/{id}': destinationPath(parts), ...tokenPaths({ errors, json, list }) },
  }, json);
}

/** What the API reports: errors, sources, tokens, dead letters, message traces and usage. */
function recordSchemas(parts: Parts): Record<string, unknown> {
  const { iso } = parts;
  return {
    Error: { type: 'object', required: ['code', 'message'], properties: { code: { type: 'string', enum: [...adminErrors.codes], description: 'Stable: what went wrong (docs/admin-api.md, "Errors", gives each code\'s status and meaning)' }, message: { type: 'string', description: 'For people: may change' }, field: { type: 'string' }, scope: { enum: ['admin', 'read', 'metadata'], description: 'MISSING_SCOPE: the scope the request needs' } } },
    Source: { type: 'object', required: ['id', 'name', 'enabled', 'writeKeys', 'createdAt', 'updatedAt'], properties: { id: { type: 'string' }, name: { type: 'string' }, enabled: { type: 'boolean' }, writeKeys: { type: 'array', items: { type: 'string' }, description: 'Each masked as ******** for tokens without the admin scope' }, createdAt: iso, updatedAt: iso } },
    ...tokenSchemas(iso),
    DeadLetter: {
      type: 'object', required: ['id', 'reason', 'status', 'responseExcerpt', 'error', 'failedAt', 'destinationId', 'sourceId', 'messageId', 'eventType', 'attempts', 'replayedAt'],
      properties: {
        id: { type: 'string' }, reason: { type: 'string' }, status: { type: ['integer', 'null'] }, responseExcerpt: { type: ['string', 'null'], description: 'null for metadata tokens (a receiver may echo the payload)' }, error: { type: ['string', 'null'] },
        failedAt: iso, destinationId: { type: 'string' }, sourceId: { type: 'string' }, messageId: { type: 'string' }, eventType: { type: 'string' }, attempts: { type: 'integer' },
        replayedAt: { type: ['string', 'null'], format: 'date-time' },
      },
    },
    DeadLetterDetail: {
      allOf: [{ $ref: '#/components/schemas/DeadLetter' }, { type: 'object', required: ['body'], properties: { body: { type: ['string', 'null'], description: 'The JSON text that was being delivered; null for metadata tokens' } } }],
    },
    MessageTrace: {
      type: 'object', required: ['messageId', 'sourceId', 'type', 'receivedAt', 'destinations'],
      properties: {
        messageId: { type: 'string' }, sourceId: { type: ['string', 'null'] }, type: { type: ['string', 'null'] }, receivedAt: { type: ['string', 'null'], format: 'date-time' },
        destinations: {
          type: 'array',
          items: {
            type: 'object', required: ['destinationId', 'state', 'tier', 'nextAttemptAt', 'deadLetterReason', 'retryPolicy', 'attempts'],
            properties: {
              destinationId: { type: 'string' },
              state: { enum: ['pending', 'delivered', 'retrying', 'dead_lettered', 'filtered'] },
              tier: { type: ['integer', 'null'], description: 'retrying: the retry tier it waits in; delivered / dead_lettered: the tier of the last attempt (0 = delivery topic); otherwise null' },
              nextAttemptAt: { type: ['string', 'null'], format: 'date-time', description: 'retrying: earliest time of the next attempt' },
              deadLetterReason: { type: ['string', 'null'] },
              filterReason: { type: ['string', 'null'], description: 'filtered: integrations (the call\'s integrations map) or filter (the destination\'s event filter); else null' },
              retryPolicy: { enum: ['default', 'destination', null], description: 'The retry policy of the last attempt: default (the deployment\'s) or destination (its own retry setting); null before any attempt' },
              attempts: {
                type: 'array', description: 'Oldest first; one entry per URL tried (urlIndex -1: no request was made)',
                items: {
                  type: 'object', required: ['attempt', 'urlIndex', 'at', 'tier', 'outcome', 'status', 'error', 'latencyMs', 'retryPolicy', 'retryStep'],
                  properties: {
                    attempt: { type: 'integer', description: 'from 1' }, urlIndex: { type: 'integer' }, at: iso, tier: { type: 'integer', description: 'where the task was read from: 0 delivery topic, N retry tier N' },
                    outcome: { enum: ['delivered', 'retry_scheduled', 'dead_lettered', 'deferred'], description: 'what happened to the task after this attempt' },
                    status: { type: ['integer', 'null'] }, error: { type: ['string', 'null'], description: 'error class without a response: timeout, connect, reset, tls, dns, circuit_open, overloaded, ...' }, latencyMs: { type: 'integer' },
                    retryPolicy: { enum: ['default', 'destination'], description: 'which retry policy applied (records written before it was recorded read as default)' },
                    retryStep: { type: ['integer', 'null'], description: 'retry_scheduled / deferred: which of the policy\'s tiers (from 1) set the wait; else null' },
                  },
                },
              },
            },
          },
        },
      },
    },
    Usage: {
      type: 'object', required: ['sourceId', 'days'],
      properties: {
        sourceId: { type: 'string' },
        days: {
          type: 'array', description: 'UTC days, newest first',
          items: {
            type: 'object', required: ['day', 'accepted', 'rejected', 'filtered', 'filteredBy'],
            properties: {
              day: { type: 'string', format: 'date' }, accepted: { type: 'integer' }, rejected: { type: 'integer' },
              filtered: { type: 'integer', description: 'calls kept from every destination by their integrations map, or from at least one by a destination filter (once per call)' },
              filteredBy: { type: 'object', properties: { integrations: { type: 'integer' }, filter: { type: 'integer' } } },
            },
          },
        },
      },
    },
  };
}

/** What the API configures: replays, signing secrets, notification endpoints, destinations, audiences and computed traits. */
function configurationSchemas(parts: Parts): Record<string, unknown> {
  const { iso, freeForm } = parts;
  return {
    Replay: {
      type: 'object',
      required: ['id', 'destinationId', 'state', 'from', 'to', 'filter', 'rate', 'createdAt', 'cancelRequestedAt', 'total', 'scanned', 'matched', 'enqueued', 'progress', 'recordsPerSecond', 'etaSeconds', 'updatedAt', 'error', 'notReplayable'],
      properties: {
        id: { type: 'string', description: 'rpl_…' }, destinationId: { type: 'string' },
        state: { enum: ['running', 'done', 'cancelled', 'failed'] },
        from: iso, to: iso, filter: freeForm('The replay\'s own filter (the destination\'s applies too)', true),
        rate: { type: 'integer', description: 'Records read per second at most, as asked (fan-out caps it at FANOUT_REPLAY_MAX_RATE)' },
        createdAt: iso, cancelRequestedAt: { type: ['string', 'null'], format: 'date-time' },
        total: { type: ['integer', 'null'], description: 'Ingest records in the range; null until fan-out planned it' },
        scanned: { type: 'integer', description: 'Records read' }, matched: { type: 'integer', description: 'Calls the filters let through' }, enqueued: { type: 'integer', description: 'Delivery tasks written (committed)' },
        progress: { type: 'number', description: '0..1' },
        recordsPerSecond: { type: ['number', 'null'] }, etaSeconds: { type: ['integer', 'null'], description: 'Estimated seconds left while running' },
        updatedAt: { type: ['string', 'null'], format: 'date-time' }, error: { type: ['string', 'null'] },
        notReplayable: { type: 'array', description: 'Parts of the range before the topic\'s retention: their calls could not be replayed', items: { type: 'object', required: ['partition', 'from', 'to'], properties: { partition: { type: 'integer' }, from: iso, to: iso } } },
      },
    },
    SigningSecretInfo: { type: 'object', required: ['id', 'createdAt', 'expiresAt'], properties: { id: { type: 'string' }, createdAt: iso, expiresAt: { type: ['string', 'null'], format: 'date-time', description: 'When it stops signing; null for the current secret' } } },
    SigningSecretValue: { type: 'object', required: ['id', 'secret', 'createdAt'], properties: { id: { type: 'string' }, secret: { type: 'string', description: 'whsec_ + base64 of 32 random bytes' }, createdAt: iso } },
    NotificationEndpoint: {
      type: 'object', required: ['id', 'url', 'eventTypes', 'enabled', 'createdAt', 'updatedAt'],
      properties: { id: { type: 'string' }, url: { type: 'string' }, eventTypes: { type: 'array', items: { enum: [...NOTIFICATION_TYPES] } }, enabled: { type: 'boolean' }, createdAt: iso, updatedAt: iso },
    },
    Destination: {
      type: 'object', required: ['id', 'sourceId', 'name', 'type', 'enabled', 'settings', 'filter', 'signing', 'createdAt', 'updatedAt'],
      properties: {
        id: { type: 'string' }, sourceId: { type: 'string' }, name: { type: 'string' }, type: { const: 'webhooks' }, enabled: { type: 'boolean' },
        disabledReason: { type: ['string', 'null'], enum: ['failing', null], description: 'failing: Switchyard disabled it because every attempt failed for SWITCHYARD_DISABLE_AFTER; cleared by enabling it again' },
        disabledAt: { type: ['string', 'null'], format: 'date-time', description: 'When Switchyard disabled it' },
        settings: {
          type: 'object', required: ['sharedSecret', 'webhooks'],
          properties: {
            sharedSecret: { type: ['string', 'null'], description: 'Masked as ******** when set' },
            webhooks: { type: 'array', maxItems: 5, items: { type: 'object', required: ['url', 'headers', 'clientCertificate'], properties: {
              url: { type: 'string' }, headers: { type: 'object', description: 'Values masked as ******** for tokens without the admin scope', additionalProperties: { type: 'string' } },
              clientCertificate: { oneOf: [{ type: 'object', required: ['set'], properties: { set: { const: true } } }, { type: 'null' }], description: 'Mutual TLS: {"set": true} when a client certificate is stored for this URL; the certificate and key are never returned' },
            } } },
          },
        },
        filter: freeForm('The event filter ({types?, events?, where?}), null when every call goes through', true),
        signing: {
          type: 'object', required: ['standard', 'secrets'],
          properties: {
            standard: { type: 'boolean', description: 'Standard Webhooks headers (webhook-id, webhook-timestamp, webhook-signature) on every request' },
            secrets: { type: 'array', description: 'The secrets signing now (values never shown): the current one (expiresAt null) and those in a rotation\'s grace period', items: { $ref: '#/components/schemas/SigningSecretInfo' } },
            newSecret: { $ref: '#/components/schemas/SigningSecretValue', description: 'Only in the response of the create or update that generated it: its value, shown once' },
          },
        },
        retry: {
          type: ['object', 'null'], required: ['tiers', 'deadline'], description: 'The destination\'s own retry policy; null: the deployment\'s (SWITCHYARD_RETRY_TIERS, SWITCHYARD_RETRY_DEADLINE)',
          properties: { tiers: { type: 'array', items: { type: 'string' }, description: 'The wait before each retry (the last repeats), e.g. 30s, 5m' }, deadline: { type: 'string', description: 'How long after the first attempt tasks are tried, e.g. 4h' } },
        },
        rateLimit: {
          type: ['object', 'null'], required: ['perSecond'], description: 'At most perSecond requests a second over every delivery instance; tasks over it wait (held, not failed). null: no limit',
          properties: { perSecond: { type: 'integer', minimum: 1, maximum: 10_000 } },
        },
        createdAt: iso, updatedAt: iso,
      },
    },
    Audience: {
      type: 'object', required: ['id', 'sourceId', 'name', 'property', 'condition', 'createdAt', 'updatedAt'],
      properties: {
        id: { type: 'string' }, sourceId: { type: 'string' }, name: { type: 'string' },
        property: { type: 'string', description: 'The user property the membership is written to: the snake_case of the name' },
        condition: freeForm('The condition (docs/audiences.md: condition language)'), createdAt: iso, updatedAt: iso,
      },
    },
    ComputedTrait: {
      type: 'object', required: ['id', 'sourceId', 'name', 'trait', 'definition', 'createdAt', 'updatedAt'],
      properties: {
        id: { type: 'string' }, sourceId: { type: 'string' }, name: { type: 'string' },
        trait: { type: 'string', description: 'The user trait the value is written to: the snake_case of the name' },
        definition: freeForm('{kind: event_count | last_seen | latest_property, ...}'), createdAt: iso, updatedAt: iso,
      },
    },
  };
}

/** Sources, their write keys, usage and live feed, and the message trace. */
function sourcePaths(parts: Parts): Record<string, unknown> {
  const { destinations, body, json, errors, idParam, list } = parts;
  return {
    '/v1/sources': {
      get: { summary: 'List sources', responses: { 200: list('sources', 'Source', 'Sources'), 401: errors[401] } },
      post: { summary: 'Create a source (with one generated write key)', requestBody: body(sourceCreate), responses: { 201: json('Source', 'Created'), 400: errors[400], 401: errors[401] } },
    },
    '/v1/sources/{id}': {
      parameters: idParam,
      get: { summary: 'Get a source', responses: { 200: json('Source', 'The source'), ...errors } },
      patch: { summary: 'Rename, enable or disable a source', requestBody: body(sourcePatch), responses: { 200: json('Source', 'Updated'), ...errors } },
      delete: { summary: 'Delete a source and its destinations', responses: { 204: { description: 'Deleted' }, 401: errors[401], 404: errors[404] } },
    },
    '/v1/sources/{id}/write-keys': {
      parameters: idParam,
      post: { summary: 'Add a write key (rotation)', responses: { 201: { description: 'The new key and the source', content: { 'application/json': { schema: { type: 'object', required: ['writeKey', 'source'], properties: { writeKey: { type: 'string' }, source: { $ref: '#/components/schemas/Source' } } } } } }, 401: errors[401], 404: errors[404] } },
    },
    '/v1/sources/{id}/write-keys/{key}': {
      parameters: [...idParam, { name: 'key', in: 'path', required: true, schema: { type: 'string' } }],
      delete: { summary: 'Remove a write key', responses: { 200: json('Source', 'Updated'), 401: errors[401], 404: errors[404] } },
    },
    '/v1/sources/{id}/usage': {
      parameters: idParam,
      get: { summary: 'Calls of a source per UTC day: accepted and rejected by ingest, filtered by integrations in fan-out (docs/admin-api.md, usage)', responses: { 200: json('Usage', 'Usage, newest day first'), 401: errors[401], 404: errors[404] } },
    },
    '/v1/sources/{id}/live': {
      parameters: idParam,
      get: {
        summary: 'The source\'s calls from now on, as Server-Sent Events (the debugger\'s live feed; docs/debugger.md)',
        description: 'Events: `ready` {sourceId} once reading from the end of the ingest topic; `call` {messageId, type, name, userId, anonymousId, timestamp, receivedAt, call} with id = messageId (for a metadata token `call` keeps only ids, type, event or name and times: no properties, traits, context or integrations); `dropped` {count} when this client read too slowly (200 calls are buffered per stream); `end` {reason} before the server closes the stream (shutdown, or revoked once the token is revoked). A comment line every 15 s.',
        responses: {
          200: { description: 'An endless text/event-stream', content: { 'text/event-stream': { schema: { type: 'string' } } } },
          401: errors[401], 404: errors[404],
          503: json('Error', 'Too many open live streams on this instance, or it is shutting down (LIVE_UNAVAILABLE)'),
        },
      },
    },
    '/v1/messages/{messageId}': {
      parameters: [{ name: 'messageId', in: 'path', required: true, schema: { type: 'string' } }],
      get: {
        summary: 'Trace of one message: when it was received, the destinations it fanned out to (or was filtered from), every delivery attempt, and where each copy is now',
        responses: {
          200: json('MessageTrace', 'The trace'), 401: errors[401],
          404: json('Error', 'MESSAGE_NOT_FOUND: not in the trace index (older than its window, or never seen)'),
        },
      },
    },
  };
}

/** Destinations (the list, and creating one), notification endpoints, secret rotation and replays. */
function destinationPaths(parts: Parts): Record<string, unknown> {
  const { destinations, body, json, errors, idParam, list } = parts;
  return {
    '/v1/destinations': {
      get: { summary: 'List destinations', parameters: [{ name: 'sourceId', in: 'query', required: false, schema: { type: 'string' } }], responses: { 200: list('destinations', 'Destination', 'Destinations'), 401: errors[401] } },
      post: { summary: 'Create a webhooks destination', requestBody: body(destinations.create), responses: { 201: json('Destination', 'Created'), 400: errors[400], 401: errors[401] } },
    },
    '/v1/notification-endpoints': {
      get: { summary: 'List notification endpoints', responses: { 200: list('notificationEndpoints', 'NotificationEndpoint', 'Notification endpoints'), 401: errors[401] } },
      post: {
        summary: 'Create a notification endpoint: it receives Standard-Webhooks-signed {type, timestamp, data} for the event types named (destination.disabled, destination.failing, message.dead_lettered, replay.completed)',
        requestBody: body(notificationEndpointSchema(new AddressPolicy([]))),
        responses: {
          201: { description: 'Created; signingSecret (whsec_) is shown in this response only', content: { 'application/json': { schema: { allOf: [{ $ref: '#/components/schemas/NotificationEndpoint' }, { type: 'object', required: ['signingSecret'], properties: { signingSecret: { $ref: '#/components/schemas/SigningSecretValue' } } }] } } } },
          400: errors[400], 401: errors[401],
        },
      },
    },
    '/v1/notification-endpoints/{id}': {
      parameters: idParam,
      get: { summary: 'Get a notification endpoint', responses: { 200: json('NotificationEndpoint', 'The notification endpoint'), 401: errors[401], 404: errors[404] } },
      delete: { summary: 'Delete a notification endpoint', responses: { 204: { description: 'Deleted' }, 401: errors[401], 404: errors[404] } },
    },
    '/v1/destinations/{id}/secrets/rotate': {
      parameters: idParam,
      post: {
        summary: 'Rotate the Standard Webhooks secret: a new one signs from now; the previous one keeps signing beside it for gracePeriod (default 24h), then is dropped',
        requestBody: { ...body(secretRotation), required: false },
        responses: {
          201: { description: 'The new secret (its value shown once) and the destination', content: { 'application/json': { schema: { type: 'object', required: ['signingSecret', 'destination'], properties: { signingSecret: { $ref: '#/components/schemas/SigningSecretValue' }, destination: { $ref: '#/components/schemas/Destination' } } } } } },
          400: json('Error', 'SIGNING_NOT_ENABLED (signing.standard is off) or an invalid gracePeriod'), 401: errors[401], 404: errors[404],
        },
      },
    },
    '/v1/destinations/{id}/replays': {
      parameters: idParam,
      get: { summary: 'The destination\'s replays, newest first', responses: { 200: list('replays', 'Replay', 'Newest first'), 401: errors[401], 404: errors[404] } },
      post: {
        summary: 'Replay the calls received between from and to into this destination (with its filter and the replay\'s own), at a bounded rate; bodies are the originals (same messageId)',
        requestBody: body(rangeReplayRequest),
        responses: { 202: json('Replay', 'Accepted: fan-out runs it'), 400: json('Error', 'INVALID_RANGE, INVALID_FILTER, DESTINATION_DISABLED or an invalid field'), 401: errors[401], 404: errors[404] },
      },
    },
    '/v1/destinations/{id}/replays/{rid}': {
      parameters: [...idParam, { name: 'rid', in: 'path', required: true, schema: { type: 'string' } }],
      get: { summary: 'A replay\'s state, counts, rate and estimated time left', responses: { 200: json('Replay', 'The replay'), 401: errors[401], 404: errors[404] } },
      delete: { summary: 'Cancel a running replay (tasks already written are delivered)', responses: { 202: json('Replay', 'Cancellation asked; the state becomes cancelled'), 401: errors[401], 404: errors[404], 409: json('Error', 'REPLAY_FINISHED') } },
    },
  };
}

/** Audiences, computed traits, deletion requests and dead letters. */
function audienceAndDeadLetterPaths(parts: Parts): Record<string, unknown> {
  const { body, json, errors, idParam, list } = parts;
  return {
    '/v1/audiences': {
      get: { summary: 'List audiences (optionally of one source)', parameters: [{ name: 'sourceId', in: 'query', required: false, schema: { type: 'string' } }], responses: { 200: list('audiences', 'Audience', 'Audiences'), 401: errors[401] } },
      post: { summary: 'Create an audience: {sourceId, name, condition}; its property is the snake_case of the name (docs/audiences.md: condition language)', requestBody: body(audienceCreate), responses: { 201: json('Audience', 'Created'), 400: errors[400], 401: errors[401] } },
    },
    '/v1/audiences/{id}': {
      parameters: idParam,
      get: { summary: 'Get an audience', responses: { 200: json('Audience', 'The audience'), ...errors } },
      patch: { summary: 'Replace the condition', requestBody: body(audiencePatch), responses: { 200: json('Audience', 'Updated'), ...errors } },
      delete: { summary: 'Delete an audience (its emissions stop; members are not sent false)', responses: { 204: { description: 'Deleted' }, 401: errors[401], 404: errors[404] } },
    },
    '/v1/computed-traits': {
      get: { summary: 'List computed traits', parameters: [{ name: 'sourceId', in: 'query', required: false, schema: { type: 'string' } }], responses: { 200: list('computedTraits', 'ComputedTrait', 'Computed traits'), 401: errors[401] } },
      post: { summary: 'Create a computed trait: {sourceId, name, definition}', requestBody: body(computedTraitCreate), responses: { 201: json('ComputedTrait', 'Created'), 400: errors[400], 401: errors[401] } },
    },
    '/v1/computed-traits/{id}': {
      parameters: idParam,
      get: { summary: 'Get a computed trait', responses: { 200: json('ComputedTrait', 'The computed trait'), ...errors } },
      delete: { summary: 'Delete a computed trait', responses: { 204: { description: 'Deleted' }, 401: errors[401], 404: errors[404] } },
    },
    '/v1/deletions': {
      post: {
        summary: 'Request the deletion of a user: one delete notification per affected source (the named ones, or all) that has an enabled webhooks destination',
        requestBody: body(deletionRequest),
        responses: { 202: { description: 'Notifications written to the pipeline', content: { 'application/json': { schema: { type: 'object', required: ['requestId', 'userId', 'notifications', 'sourceIds'], properties: { requestId: { type: 'string' }, userId: { type: 'string' }, notifications: { type: 'integer' }, sourceIds: { type: 'array', items: { type: 'string' } } } } } } }, 400: errors[400], 401: errors[401] },
      },
    },
    '/v1/dead-letters': {
      get: {
        summary: 'List dead letters, newest first (filters: destinationId, reason, since; limit ≤ 1000)',
        parameters: Object.keys(deadLetterQuery.shape).map((name) => ({ name, in: 'query', required: false, schema: { type: name === 'limit' ? 'integer' : 'string' } })),
        responses: { 200: { description: '{deadLetters: [...], total}', content: { 'application/json': { schema: { type: 'object', required: ['deadLetters', 'total'], properties: { deadLetters: { type: 'array', items: { $ref: '#/components/schemas/DeadLetter' } }, total: { type: 'integer', description: 'How many match the filters, before the limit' } } } } } }, 400: errors[400], 401: errors[401] },
      },
    },
    '/v1/dead-letters/{id}': {
      parameters: idParam,
      get: { summary: 'One dead letter, with the body that was being delivered', responses: { 200: json('DeadLetterDetail', 'The dead letter and its body'), 401: errors[401], 404: errors[404] } },
    },
    '/v1/dead-letters/replay': {
      post: {
        summary: 'Re-enqueue dead letters as fresh delivery tasks',
        requestBody: body(replayRequest),
        responses: { 202: { description: 'Replayed', content: { 'application/json': { schema: { type: 'object', required: ['replayed', 'notFound'], properties: { replayed: { type: 'array', items: { type: 'string' } }, notFound: { type: 'array', items: { type: 'string' } } } } } } }, 400: errors[400], 401: errors[401] },
      },
    },
  };
}

/** One destination: get, update, delete. */
function destinationPath(parts: Parts): Record<string, unknown> {
  const { destinations, body, json, errors, idParam } = parts;
  return {
    parameters: idParam,
    get: { summary: 'Get a destination', responses: { 200: json('Destination', 'The destination'), ...errors } },
    patch: { summary: 'Update a destination (omitted fields unchanged; sharedSecret null removes it; a webhook without clientCertificate keeps the one stored for its URL, null removes it)', requestBody: body(destinations.patch), responses: { 200: json('Destination', 'Updated'), ...errors } },
    delete: { summary: 'Delete a destination', responses: { 204: { description: 'Deleted' }, 401: errors[401], 404: errors[404] } },
  };
}
