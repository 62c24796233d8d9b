/**
 * Whether a call's integrations map lets it through to the webhooks destination
 * (docs/decisions/0003-destination-selection.md, client-library.md "Destination selection"). Pure:
 * the stored JSON text in, a boolean out. Rules: every destination is enabled by default; `All:
 * false` disables every destination whose own key is not true; a destination's own key wins over
 * `All`. Keys are case-sensitive, so only `Webhooks` names this destination.
 */
export const WEBHOOKS_KEY = 'Webhooks';

/** Why a call produced no delivery task for the destination. */
export type FilterReason = 'integrations';

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The stored map, or null when there is none we can read (a bad map must not silently drop data). */
function parseMap(text: string | null): Json | null {
  if (text === null) return null;
  try {
    const parsed: unknown = JSON.parse(text);
    return isObject(parsed) ? parsed : null;
  } catch {
    return null;
  }
}

/**
 * The destination's own setting: true/false as given; an object (per-destination options,
 * which some clients send in place of `true`) counts as enabled; anything else (string,
 * number, null) is ignored, as if the key were absent.
 */
function ownSetting(value: unknown): boolean | undefined {
  if (typeof value === 'boolean') return value;
  if (isObject(value)) return true;
  return undefined;
}

export function webhooksEnabledBy(integrationsJson: string | null): boolean {
  const map = parseMap(integrationsJson);
  if (map === null) return true;
  // Object.hasOwn: a key inherited from Object.prototype is not a setting.
  const own = Object.hasOwn(map, WEBHOOKS_KEY) ? ownSetting(map[WEBHOOKS_KEY]) : undefined;
  if (own !== undefined) return own;
  // Only a literal `false` turns everything off; other values of All are ignored like other keys.
  return !(Object.hasOwn(map, 'All') && map['All'] === false);
}
