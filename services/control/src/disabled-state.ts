import type { Destination } from '@switchyard/platform/config-view/config-state';

/** Why Switchyard disabled a destination (`disabledReason`); an operator's own disabling has none. */
export const DISABLED_REASONS = ['failing'] as const;
export type DisabledReason = (typeof DISABLED_REASONS)[number];

type DisabledFields = Pick<Destination, 'enabled' | 'disabledReason' | 'disabledAt'>;

/**
 * The enabled state after an API request: enabling clears why Switchyard disabled it (and so
 * restarts the failing clock, which counts from updatedAt: docs/decisions/0019-auto-disable-and-notifications.md);
 * disabling keeps a reason already there; absent changes nothing.
 */
export function enabledAfterRequest(current: DisabledFields, enabled: boolean | undefined): DisabledFields {
  if (enabled === undefined) return { enabled: current.enabled, disabledReason: current.disabledReason, disabledAt: current.disabledAt };
  if (enabled) return { enabled: true, disabledReason: null, disabledAt: null };
  return { enabled: false, disabledReason: current.enabled ? null : current.disabledReason, disabledAt: current.enabled ? null : current.disabledAt };
}

/**
 * The enabled state a seed file's entry leaves: the file says what an operator wants, but a
 * destination Switchyard disabled stays disabled across restarts until someone enables it through
 * the API or CLI (re-applying the seed on every start would otherwise undo it).
 */
export function enabledAfterSeed(current: DisabledFields | undefined, enabled: boolean): DisabledFields {
  if (current && !current.enabled && current.disabledReason !== null) return { enabled: false, disabledReason: current.disabledReason, disabledAt: current.disabledAt };
  return { enabled, disabledReason: null, disabledAt: null };
}

/** The destination Switchyard disables because every attempt failed for the configured time. */
export function disabledForFailing(current: Destination, now: number): Destination {
  return { ...current, enabled: false, disabledReason: 'failing', disabledAt: now, updatedAt: now };
}
