import type { Destination, Source } from '@switchyard/platform/config-view/config-state';

/** The API's JSON shapes of stored records: ISO timestamps, the shared secret never shown. */
export const MASKED_SECRET = '********';

export function sourceView(s: Source) {
  return { id: s.id, name: s.name, enabled: s.enabled, writeKeys: [...s.writeKeys], createdAt: iso(s.createdAt), updatedAt: iso(s.updatedAt) };
}

export function destinationView(d: Destination) {
  return {
    id: d.id, sourceId: d.sourceId, name: d.name, type: d.type, enabled: d.enabled,
    settings: { sharedSecret: d.sharedSecret === null ? null : MASKED_SECRET, webhooks: d.webhooks.map((w) => ({ url: w.url, headers: { ...w.headers } })) },
    filter: d.filter === null ? null : JSON.parse(d.filter) as unknown,
    createdAt: iso(d.createdAt), updatedAt: iso(d.updatedAt),
  };
}

/** A validated filter as stored (JSON text); null or absent: no filter. */
export function storedFilter(filter: unknown): string | null {
  return filter === undefined || filter === null ? null : JSON.stringify(filter);
}

function iso(ms: number): string { return new Date(ms).toISOString(); }
