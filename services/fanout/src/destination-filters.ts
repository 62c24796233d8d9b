import type { CallFields } from '@switchyard/platform/audiences/condition';
import type { Destination } from '@switchyard/platform/config-view/config-state';
import { filterOf, type CompiledFilter } from '@switchyard/platform/filters/destination-filter';
import type { EventRecord } from '@switchyard/platform/tasks/webhook-body';

/** The destinations whose event filter lets a call through, and the ids of those whose filter kept it. */
export interface FilterSplit { passing: Destination[]; dropped: string[] }

const NONE: string[] = [];

/**
 * Applies each destination's event filter (docs/admin-api.md, "Event filters") to one call, and `extra` (a
 * replay's own filter) to every destination alike. Filters are
 * compiled once per configuration record (`filterOf`), and the call's free-form objects are parsed
 * at most once, only when some filter has a `where`. With no filter among the destinations (the
 * common case) this allocates nothing.
 */
export function splitByFilter(event: EventRecord, destinations: Destination[], extra?: CompiledFilter | null): FilterSplit {
  let anyFilter = Boolean(extra);
  for (const d of destinations) if (filterOf(d)) { anyFilter = true; break; }
  if (!anyFilter) return { passing: destinations, dropped: NONE };

  let fields: CallFields | undefined;
  const lazyFields = () => (fields ??= callFields(event));
  const eventName = event.type === 'track' ? event.value.event : null;
  const passing: Destination[] = [];
  const dropped: string[] = [];
  for (const d of destinations) {
    const filter = filterOf(d);
    const kept = (!filter || filter.test(event.type, eventName, lazyFields)) && (!extra || extra.test(event.type, eventName, lazyFields));
    if (kept) passing.push(d);
    else dropped.push(d.id);
  }
  return { passing, dropped };
}

/** The objects a `where` reads: properties (track, page, screen), traits (identify, group), context. */
export function callFields(event: EventRecord): CallFields {
  const v = event.value as { properties?: string | null; traits?: string | null; context: string | null };
  return { properties: parseObject(v.properties), traits: parseObject(v.traits), context: parseObject(v.context) };
}

function parseObject(text: string | null | undefined): Record<string, unknown> {
  if (!text) return {};
  try {
    const parsed: unknown = JSON.parse(text);
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? parsed as Record<string, unknown> : {};
  } catch {
    return {};
  }
}
