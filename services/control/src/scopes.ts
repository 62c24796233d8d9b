import type { HttpError } from '@switchyard/platform/http/error-catalogue';
import { apiError } from './admin-errors.js';

/**
 * The scopes of admin API tokens (docs/admin-api.md, "Tokens and scopes"): `admin` may do
 * everything, tokens included; `read` may read every route (GET), payloads included; `metadata`
 * may read every route too, but sees no event payloads (properties, traits, context, webhook
 * bodies, response excerpts). A token limited to sources sees only them. Pure: the auth hook
 * decides with these, the routes ask the request's Access.
 */
export const SCOPES = ['admin', 'read', 'metadata'] as const;
export type Scope = (typeof SCOPES)[number];

/** Who made a request, once authenticated. */
export interface Principal {
  /** The stored token's id; null for SWITCHYARD_ADMIN_TOKEN. */
  tokenId: string | null;
  scopes: ReadonlySet<Scope>;
  /** The sources it may see; null: every source. */
  sourceIds: ReadonlySet<string> | null;
}

/** SWITCHYARD_ADMIN_TOKEN: an admin token of every source. */
export const ENV_ADMIN: Principal = Object.freeze({ tokenId: null, scopes: new Set<Scope>(['admin']), sourceIds: null });

/** What holding a scope grants. */
const GRANTS: Readonly<Record<Scope, readonly Scope[]>> = { admin: ['admin', 'read', 'metadata'], read: ['read', 'metadata'], metadata: ['metadata'] };

/** A scope this version knows (a stored token may name one of a later version: it grants nothing here). */
export function isScope(value: string): value is Scope {
  return (SCOPES as readonly string[]).includes(value);
}

export function hasScope(principal: Principal, needed: Scope): boolean {
  for (const held of principal.scopes) if (GRANTS[held].includes(needed)) return true;
  return false;
}

const READS = new Set(['GET', 'HEAD']);

/**
 * The scope a request needs: a read (GET, HEAD) the scope its route declares (`config.scope`,
 * `metadata` when it declares none: every token may read), any other method `admin`. Unmatched
 * URLs are judged by their method alike, so a 404 tells a read-only token nothing about writes.
 */
export function requiredScope(method: string, declared: Scope | undefined): Scope {
  return READS.has(method) ? declared ?? 'metadata' : 'admin';
}

/** The 403 of a token without the scope a route needs; `scope` names the one it lacks. */
export function missingScope(scope: Scope): HttpError {
  return apiError('MISSING_SCOPE', { scope });
}

/** The 403 of a token limited to other sources than the resource's. */
export function sourceNotAllowed(): HttpError {
  return apiError('SOURCE_NOT_ALLOWED');
}

/** What one authenticated request may see: the routes ask it (payloads, sources) as they answer. */
export class Access {
  constructor(readonly principal: Principal) {}

  /** Whether event payloads may be shown (admin and read tokens); metadata tokens get them redacted. */
  get payloads(): boolean { return hasScope(this.principal, 'read'); }

  /** Whether credentials (write keys, webhook header values) may be shown: admin tokens only. */
  get credentials(): boolean { return hasScope(this.principal, 'admin'); }

  /** Whether the token may see a source's resources (a null source belongs to none: only unrestricted tokens). */
  allowsSource(sourceId: string | null): boolean {
    const allowed = this.principal.sourceIds;
    return allowed === null || (sourceId !== null && allowed.has(sourceId));
  }

  /** Throws the 403 SOURCE_NOT_ALLOWED unless the token may see the source. */
  requireSource(sourceId: string | null): void {
    if (!this.allowsSource(sourceId)) throw sourceNotAllowed();
  }

  /** The items of sources the token may see. */
  visible<T>(items: readonly T[], sourceOf: (item: T) => string | null): T[] {
    return this.principal.sourceIds === null ? [...items] : items.filter((item) => this.allowsSource(sourceOf(item)));
  }
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The scope a read route needs when it is not `metadata` (scopes.ts, requiredScope). */
    scope?: Scope;
  }
  interface FastifyRequest {
    /** Set by the auth hook on every /v1 request it let through. */
    access: Access | undefined;
  }
}

/** The request's Access. Fails closed: a route reached without the auth hook shows nothing. */
export function accessOf(req: { access: Access | undefined }): Access {
  if (!req.access) throw apiError('NO_ACCESS_DECIDED');
  return req.access;
}
