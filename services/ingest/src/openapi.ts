import { SETTINGS_MAX_AGE_SECONDS } from './browser-settings.js';
import { CALL_TYPES, MAX_MESSAGE_BYTES } from './event-rules.js';
import { MAX_REQUEST_BYTES } from './request-body.js';
import { ROUTES } from './paths.js';
import { settingsErrors, trackingErrors } from './tracking-errors.js';

/**
 * The OpenAPI 3.1 document of the tracking API, built from the route table and limits the
 * service uses. Served at GET /openapi.json; a copy is kept in services/ingest/openapi.json
 * (`npm run gen:openapi` rewrites it; a test checks they match).
 */
export function openApiDocument(): Record<string, unknown> {
  const call = {
    type: 'object',
    description: `One analytics call, at most ${MAX_MESSAGE_BYTES / 1024} KB as JSON. userId or anonymousId is required (alias: userId and previousId); track needs event, group needs groupId.`,
    properties: {
      type: { enum: [...CALL_TYPES], description: 'In a batch; single-call paths take the type from the path' },
      messageId: { type: 'string', description: 'Kept when given (receivers dedupe on it), generated otherwise' },
      userId: { type: 'string' }, anonymousId: { type: 'string' },
      event: { type: 'string' }, name: { type: 'string' }, category: { type: 'string' },
      groupId: { type: 'string' }, previousId: { type: 'string' },
      properties: { type: 'object' }, traits: { type: 'object' }, context: { type: 'object' }, integrations: { type: 'object', additionalProperties: { type: 'boolean' } },
      timestamp: { type: 'string', description: 'ISO 8601 (also +0000 offsets, any fraction digits); the time of the call, past times are kept' },
      sentAt: { type: 'string' },
    },
  };
  const ok = {
    description: 'Every accepted call is acknowledged by Kafka. Calls that broke a rule are listed and kept for operators; the others were accepted.',
    content: { 'application/json': { schema: { type: 'object', required: ['success'], properties: {
      success: { const: true },
      rejected: { type: 'array', items: { type: 'object', properties: { index: { type: 'integer' }, messageId: { type: ['string', 'null'] }, reason: { type: 'string' }, message: { type: 'string' } } } },
    } } } },
  };
  const error = (description: string) => ({ description, content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } });
  const responses = {
    200: ok,
    400: error(`Nothing was written: malformed JSON, body over ${MAX_REQUEST_BYTES / 1024} KB (after decompression), a single call that breaks a rule, ...`),
    401: error('Missing, unknown or disabled write key (refused only once the configuration is known to be up to date). Nothing was written.'),
    503: error('Kafka did not acknowledge in time (UNAVAILABLE), the configuration is still loading (NOT_READY), or the write key is not known here and the configuration is not known to be up to date (CONFIG_BEHIND); nothing is reported as accepted. Retry after the Retry-After seconds.'),
  };
  const batchBody = { type: 'object', required: ['batch'], properties: { batch: { type: 'array', items: call }, context: { type: 'object', description: 'Merged into every call' }, integrations: { type: 'object', description: 'Merged into every call' }, sentAt: { type: 'string' }, writeKey: { type: 'string' } } };
  const paths: Record<string, unknown> = {};
  for (const [path, route] of ROUTES) {
    paths[path] = {
      post: {
        summary: route === 'batch' ? 'A batch of calls' : `One ${route} call`,
        description: 'Also answers with a trailing slash. The body is JSON whatever the Content-Type; gzip, deflate and br Content-Encodings are accepted.',
        requestBody: { required: true, content: { 'application/json': { schema: route === 'batch' ? batchBody : { ...call, properties: { ...call.properties, writeKey: { type: 'string' } } } } } },
        responses,
      },
    };
  }
  paths['/v1/projects/{writeKey}/settings'] = {
    get: {
      summary: 'The settings analytics.js loads before sending (its cdnURL points here)',
      description: `For analytics.js (@segment/analytics-next): sends every call to this service (integrations["Segment.io"].apiHost, without scheme, and protocol, from INGEST_PUBLIC_URL), loads no destinations, plugins or middleware in the page, and turns its remote metrics off. Cache-Control: public, max-age=${SETTINGS_MAX_AGE_SECONDS}; CORS open.`,
      security: [{}],
      parameters: [{ name: 'writeKey', in: 'path', required: true, schema: { type: 'string' } }],
      responses: {
        200: { description: 'The settings document', content: { 'application/json': { schema: { type: 'object', required: ['integrations'], properties: {
          integrations: { type: 'object', properties: { 'Segment.io': { type: 'object', required: ['apiKey', 'apiHost', 'protocol'], properties: {
            apiKey: { type: 'string', description: 'The write key (analytics.js puts it in every call and in HTTP Basic)' },
            apiHost: { type: 'string', description: 'host[:port][/prefix]/v1, no scheme', examples: ['127.0.0.1:8080/v1'] },
            protocol: { enum: ['http', 'https'] },
          } } } },
          remotePlugins: { type: 'array', maxItems: 0 },
          metrics: { type: 'object', properties: { sampleRate: { const: 0 } } },
        } } } } },
        404: error('Unknown write key (INVALID_WRITE_KEY) or disabled source (SOURCE_DISABLED).'),
        503: error('Still reading the sources and write keys (NOT_READY), or the key is unknown while the configuration is not known to be up to date (CONFIG_BEHIND); retry.'),
      },
    },
  };
  return {
    openapi: '3.1.0',
    info: { title: 'Switchyard tracking API', version: '1.0.0', description: 'Wire-compatible with the tracking API that analytics client libraries speak. Authenticate with the write key as the HTTP Basic user name (empty password) or as writeKey in the body.' },
    servers: [{ url: 'http://127.0.0.1:8080' }],
    security: [{ writeKey: [] }, {}],
    components: {
      securitySchemes: { writeKey: { type: 'http', scheme: 'basic', description: 'User name: the write key; password: empty' } },
      schemas: { Error: { type: 'object', required: ['code', 'message'], properties: {
        code: { type: 'string', enum: [...new Set([...trackingErrors.codes, ...settingsErrors.codes])], description: 'Stable: what went wrong (docs/tracking-api.md, "Errors", gives each code\'s status and meaning)' },
        message: { type: 'string', description: 'For people: may change' },
      } } },
    },
    paths,
  };
}
