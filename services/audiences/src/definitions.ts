import type { ConfigState } from '@switchyard/platform/config-view/config-state';
import { counterKeys, parseCondition, type Condition, type CounterSpec } from '@switchyard/platform/audiences/condition';
import { computedCounterSpecs, parseComputedTrait, type ComputedTrait } from '@switchyard/platform/audiences/computed-trait';
import { snakeCase } from '@switchyard/platform/audiences/snake-case';

export interface SourceDefinitions {
  audiences: Array<{ id: string; propertyName: string; condition: Condition }>;
  traits: Array<{ id: string; name: string; def: ComputedTrait }>;
  /** Every event counter the source's definitions need. */
  specs: CounterSpec[];
}

const cache = new WeakMap<ConfigState, { version: number; bySource: Map<string, SourceDefinitions> }>();

/**
 * The parsed audiences and computed traits of a source, rebuilt only when the configuration
 * changed (definitions were validated by the control service; one that no longer parses is skipped).
 */
export function definitionsOf(config: ConfigState, sourceId: string): SourceDefinitions {
  let entry = cache.get(config);
  if (!entry || entry.version !== config.version) {
    entry = { version: config.version, bySource: new Map() };
    cache.set(config, entry);
  }
  let defs = entry.bySource.get(sourceId);
  if (!defs) {
    defs = build(config, sourceId);
    entry.bySource.set(sourceId, defs);
  }
  return defs;
}

function build(config: ConfigState, sourceId: string): SourceDefinitions {
  const audiences: SourceDefinitions['audiences'] = [];
  const traits: SourceDefinitions['traits'] = [];
  const specs = new Map<string, CounterSpec>();
  const addSpecs = (list: CounterSpec[]) => {
    for (const s of list) {
      const prev = specs.get(s.key);
      if (!prev || prev.windowMs < s.windowMs) specs.set(s.key, s);
    }
  };
  for (const a of config.audiences()) {
    if (a.sourceId !== sourceId) continue;
    const parsed = parseCondition(safeJson(a.condition));
    if (!parsed.ok) continue;
    audiences.push({ id: a.id, propertyName: snakeCase(a.name), condition: parsed.condition });
    addSpecs(counterKeys(parsed.condition));
  }
  for (const t of config.computedTraits()) {
    if (t.sourceId !== sourceId) continue;
    const parsed = parseComputedTrait(safeJson(t.kind));
    if (!parsed.ok) continue;
    traits.push({ id: t.id, name: snakeCase(t.name), def: parsed.trait });
    addSpecs(computedCounterSpecs(parsed.trait));
  }
  return { audiences, traits, specs: [...specs.values()] };
}

function safeJson(text: string): unknown {
  try { return JSON.parse(text); } catch { return undefined; }
}
