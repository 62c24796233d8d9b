import { evaluate, type Condition } from '@switchyard/platform/audiences/condition';
import { baselineValue, computeTrait, type ComputedTrait } from '@switchyard/platform/audiences/computed-trait';
import type { UserState } from '@switchyard/platform/audiences/user-state';

export interface AudienceDefinition { id: string; propertyName: string; condition: Condition }
export interface TraitDefinition { id: string; name: string; def: ComputedTrait }

/**
 * The sync decision for one user (webhooks destination, "States and transitions"): which
 * properties to deliver in an identify call, and the state recording them as delivered.
 *
 * - An audience property is delivered when membership differs from the last delivered one:
 *   `true` on entry, `false` on exit. Never delivered counts as not a member, so a user who
 *   never was one and is not now produces nothing.
 * - A computed trait is delivered when its value differs from the last delivered one. Never
 *   delivered counts as the trait's baseline (0 for counts, null otherwise), so users without the
 *   event produce nothing; null is delivered only to replace a delivered value.
 * - `traits` is empty when nothing changed; `next` is then `state` itself.
 * - Properties are keyed by `propertyName` / `name` as given (callers pass the snake_case form).
 */
export function membershipChanges(
  state: UserState,
  audiences: AudienceDefinition[],
  traits: TraitDefinition[],
  now: number,
): { traits: Record<string, unknown>; next: UserState } {
  const out: Record<string, unknown> = {};
  let memberships = state.memberships;
  let computed = state.computed;
  for (const audience of audiences) {
    const member = evaluate(audience.condition, state, now);
    if (member === (state.memberships[audience.id] ?? false)) continue;
    out[audience.propertyName] = member;
    if (memberships === state.memberships) memberships = { ...memberships };
    memberships[audience.id] = member;
  }
  for (const trait of traits) {
    const value = computeTrait(trait.def, state, now);
    const delivered = Object.hasOwn(state.computed, trait.id) ? state.computed[trait.id] : baselineValue(trait.def);
    if (value === delivered) continue;
    out[trait.name] = value;
    if (computed === state.computed) computed = { ...computed };
    computed[trait.id] = value;
  }
  const changed = memberships !== state.memberships || computed !== state.computed;
  return { traits: out, next: changed ? { ...state, memberships, computed } : state };
}

/**
 * The creation backfill of one audience for one user: `true` is delivered for a current member
 * and recorded; a non-member is recorded as `false` (so a repeated backfill skips them) and
 * nothing is delivered. A user already recorded as a member is not sent again.
 */
export function initialSync(state: UserState, audience: AudienceDefinition, now: number): { emit: boolean; next: UserState } {
  const recorded = state.memberships[audience.id];
  if (recorded === true) return { emit: false, next: state };
  const member = evaluate(audience.condition, state, now);
  if (recorded === member) return { emit: false, next: state };
  return { emit: member, next: { ...state, memberships: { ...state.memberships, [audience.id]: member } } };
}
