import { z } from 'zod';
import { tokenCreate } from './routes/tokens.js';
import { SCOPES, type Scope } from './scopes.js';

/**
 * The parts of the OpenAPI document about who may call what: the token routes and their schemas,
 * and on every /v1 operation the scope it needs (as an OAuth-style scope list on the bearer
 * requirement) with its 403 and 429 answers. Kept apart from openapi.ts, which describes the
 * resources; `withAccess` is applied to that document last.
 */

/** Read routes that need more than `metadata` (their route config declares `scope`). */
export const ADMIN_READS: ReadonlySet<string> = new Set(['/v1/tokens', '/v1/notification-endpoints', '/v1/notification-endpoints/{id}']);

const METHODS = ['get', 'put', 'post', 'patch', 'delete'] as const;

export const SECURITY_DESCRIPTION = [
  'Every /v1 route requires `Authorization: Bearer <token>`: SWITCHYARD_ADMIN_TOKEN (an admin token), or a token made with POST /v1/tokens.',
  'Scopes: `admin` may do everything, tokens included; `read` may call every GET route and use the debugger, payloads included;',
  '`metadata` may call every GET route except /v1/tokens, with no payloads (live feed calls keep only ids, type, names and times;',
  'dead letters have body and responseExcerpt null). Only admin tokens see write keys and webhook header values (others get ********).',
  'Any other method than GET needs `admin`. A token limited to sourceIds sees only those sources: lists are filtered, and a route for',
  'another source, its destinations, dead letters or message traces answers 403 SOURCE_NOT_ALLOWED.',
  'Refusals: 401 UNAUTHORIZED (missing, unknown or revoked token), 403 MISSING_SCOPE with `scope` naming the scope needed,',
  '403 SOURCE_NOT_ALLOWED, 429 TOO_MANY_AUTH_FAILURES with Retry-After after too many failed authentications from one address',
  '(CONTROL_AUTH_FAILURE_LIMIT per CONTROL_AUTH_FAILURE_WINDOW; a valid token is never limited).',
].join(' ');

/** The scope an operation needs (scopes.ts, requiredScope, with the routes' declared scopes). */
export function operationScope(path: string, method: string): Scope {
  return method === 'get' && !ADMIN_READS.has(path) ? 'metadata' : 'admin';
}

export function tokenSchemas(iso: Record<string, unknown>) {
  const scopes = { type: 'array', items: { enum: [...SCOPES] } };
  const properties = {
    id: { type: 'string', description: 'tok_…' }, name: { type: 'string' }, scopes,
    sourceIds: { type: ['array', 'null'], items: { type: 'string' }, description: 'The sources it is limited to; null: every source' }, createdAt: iso,
  };
  return {
    Token: { type: 'object', required: ['id', 'name', 'scopes', 'sourceIds', 'createdAt'], description: 'A stored token: never its value or its hash', properties },
    TokenCreated: {
      type: 'object', required: ['id', 'token', 'name', 'scopes', 'sourceIds', 'createdAt'],
      properties: { ...properties, token: { type: 'string', description: 'syt_ + 256 random bits in base64url: shown in this answer only (the token is stored as its SHA-256)' } },
    },
  };
}

type Json = Record<string, unknown>;

export function tokenPaths(helpers: { errors: Record<number, Json>; json: (ref: string, description: string) => Json; list: (key: string, ref: string, description: string) => Json }) {
  const { errors, json, list } = helpers;
  return {
    '/v1/tokens': {
      get: { summary: 'List tokens (admin): id, name, scopes, sourceIds, createdAt — never the token', responses: { 200: list('tokens', 'Token', 'Oldest first'), 401: errors[401] } },
      post: {
        summary: 'Make a token: {name, scopes: [admin | read | metadata], sourceIds?}; the answer is the only time the token is shown',
        requestBody: { required: true, content: { 'application/json': { schema: z.toJSONSchema(tokenCreate, { io: 'input', unrepresentable: 'any' }) } } },
        responses: { 201: json('TokenCreated', 'Created: the token, shown once'), 400: json('Error', 'Invalid: `field` names it (UNKNOWN_SOURCE for sourceIds[i]; INVALID_FIELD for sourceIds with admin); TOO_MANY_TOKENS'), 401: errors[401] },
      },
    },
    '/v1/tokens/{id}': {
      parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }],
      delete: { summary: 'Revoke a token: refused by every control instance within a second or two', responses: { 204: { description: 'Revoked' }, 401: errors[401], 404: errors[404] } },
    },
  };
}

/** Adds to every /v1 operation its scope (security) and the 403 and 429 answers of the auth hook. */
export function withAccess<D extends { paths: Record<string, Json> }>(document: D, json: (ref: string, description: string) => Json): D {
  for (const [path, item] of Object.entries(document.paths)) {
    if (!path.startsWith('/v1/')) continue;
    for (const method of METHODS) {
      const operation = item[method] as { security?: unknown; responses: Record<string, unknown> } | undefined;
      if (!operation) continue;
      const scope = operationScope(path, method);
      operation.security = [{ bearer: [scope] }];
      operation.responses['403'] ??= json('Error', scope === 'metadata'
        ? 'SOURCE_NOT_ALLOWED: the token is limited to other sources'
        : `MISSING_SCOPE: the token lacks the ${scope} scope (\`scope\` names it)`);
      operation.responses['429'] ??= json('Error', 'TOO_MANY_AUTH_FAILURES: too many failed authentications from this address; Retry-After says when to try again');
    }
  }
  return document;
}
