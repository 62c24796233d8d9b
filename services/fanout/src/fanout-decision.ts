import type { Decoded } from '@switchyard/platform/codec/avro-codec';
import { REJECT_REASONS } from '@switchyard/platform/calls/call-rules';
import type { ConfigState } from '@switchyard/platform/config-view/config-state';
import type { CompiledFilter } from '@switchyard/platform/filters/destination-filter';
import type { DeliveryTask, FanoutTrace } from '@switchyard/platform/schemas/generated';
import { eventRecordOf, freshTask, taskKey, userKeyOf } from '@switchyard/platform/tasks/delivery-task';
import { webhookBodyText, type EventRecord } from '@switchyard/platform/tasks/webhook-body';
import { splitByFilter } from './destination-filters.js';
import { directRecordViolation } from './direct-record-rules.js';
import { webhooksEnabledBy } from './integrations.js';

/** Why an event produced no task (label `reason` of fanout_events_filtered_total). */
export const FILTER_REASONS = ['no_destination', 'source_unknown', 'source_disabled', 'integrations', 'filter'] as const;
export type FilterReason = (typeof FILTER_REASONS)[number];
/** Why a decoded record is invalid: a direct record breaking a call rule, a record not an event, a body that cannot be built. */
export const INVALID_REASONS = [...REJECT_REASONS, 'unexpected_type', 'unbuildable'] as const;
export type InvalidReason = (typeof INVALID_REASONS)[number];

/**
 * What fan-out does with one ingest record, decided without I/O: the delivery tasks to write (one
 * per enabled webhooks destination of the event's source that the integrations map and the
 * destination's event filter let through),
 * or why there are none, or why the record is invalid. A direct record (not written by a Switchyard
 * service: no origin header) must first keep the call rules ingest applies to HTTP calls, and says
 * how it counts in its source's usage.
 */
export type FanoutDecision =
  /** `filteredDestinationIds`: enabled destinations whose event filter kept the call (the others got tasks). */
  | { kind: 'tasks'; event: EventFacts; tasks: Array<{ key: string; task: DeliveryTask }>; filteredDestinationIds: string[]; usage?: DirectUsage }
  /** `destinationIds`: the enabled destinations the event was kept from (integrations, filter), else none. */
  | { kind: 'filtered'; event: EventFacts; reason: FilterReason; destinationIds: string[]; usage?: DirectUsage }
  /** `event`: what is known of a record that decoded as an event (for invalid-events and usage). */
  | { kind: 'invalid'; reason: InvalidReason; message: string; event?: EventFacts; usage?: DirectUsage };

/**
 * How a direct record counts in its source's usage, like an HTTP call at ingest: accepted when it
 * keeps the rules, rejected when it breaks one. Absent for records Switchyard wrote (ingest counted
 * them where they entered; control's and audiences' are not calls of a client) and for direct
 * records of an unknown or disabled source (an HTTP call with such a write key counts nowhere).
 */
export type DirectUsage = 'accepted' | 'rejected';

/** A record with no origin header, and the size of its value as produced. */
export interface DirectRecord { bytes: number }

/** What the trace and usage need of the event. */
export interface EventFacts { messageId: string; sourceId: string; type: EventRecord['type']; receivedAt: number }

/**
 * A replay (docs/delivery.md, "Replays of a time range"): only this destination is considered, with its own filter and the
 * replay's. Everything else — the rules of direct records, integrations, the body — is the same
 * decision, so replayed tasks are identical to the originals.
 */
export interface ReplayTarget { destinationId: string; filter: CompiledFilter | null }

export function decideFanout(decoded: Decoded, config: ConfigState, now: number, direct?: DirectRecord, target?: ReplayTarget): FanoutDecision {
  const event = eventRecordOf(decoded);
  if (!event) return { kind: 'invalid', reason: 'unexpected_type', message: `${decoded.name} is not an event type` };
  const { type } = event;
  const { sourceId, messageId, receivedAt, integrations } = event.value;

  const facts: EventFacts = { messageId, sourceId, type, receivedAt };
  const source = config.source(sourceId);
  if (!source) return { kind: 'filtered', event: facts, reason: 'source_unknown', destinationIds: [] };
  if (!source.enabled) return { kind: 'filtered', event: facts, reason: 'source_disabled', destinationIds: [] };
  // Only direct records are checked and counted here: the origin decides, so the common case costs nothing.
  const usage: { usage?: DirectUsage } = direct ? { usage: 'accepted' } : {};
  if (direct) {
    const broken = directRecordViolation(event, direct.bytes);
    if (broken) return { kind: 'invalid', ...broken, event: facts, usage: 'rejected' };
  }
  const all = config.enabledWebhooksOf(sourceId);
  const destinations = target ? all.filter((d) => d.id === target.destinationId) : all;
  if (destinations.length === 0) return { kind: 'filtered', event: facts, reason: 'no_destination', destinationIds: [], ...usage };
  if (!webhooksEnabledBy(integrations)) return { kind: 'filtered', event: facts, reason: 'integrations', destinationIds: destinations.map((d) => d.id), ...usage };
  const { passing, dropped } = splitByFilter(event, destinations, target?.filter);
  if (passing.length === 0) return { kind: 'filtered', event: facts, reason: 'filter', destinationIds: dropped, ...usage };

  let body: string;
  try {
    body = webhookBodyText(event);
  } catch (err) {
    // E.g. a timestamp outside the years Date can show. Over HTTP such a call would not pass ingest.
    return { kind: 'invalid', reason: 'unbuildable', message: `cannot build the webhook body: ${(err as Error).message}`, event: facts, ...(direct ? { usage: 'rejected' as const } : {}) };
  }
  const userKey = userKeyOf(event);
  return {
    kind: 'tasks',
    event: facts,
    ...usage,
    filteredDestinationIds: dropped,
    tasks: passing.map((d) => ({ key: taskKey(d.id, userKey), task: freshTask(event, d.id, body, now) })),
  };
}

/** The trace record of a decision (delivery-attempts topic): where the event went, or why nowhere. */
export function fanoutTrace(decision: Exclude<FanoutDecision, { kind: 'invalid' }>, now: number): FanoutTrace {
  const { messageId, sourceId, type, receivedAt } = decision.event;
  return decision.kind === 'tasks'
    ? {
      messageId, sourceId, eventType: type, destinationIds: decision.tasks.map((t) => t.task.destinationId),
      filteredDestinationIds: decision.filteredDestinationIds, filterReason: decision.filteredDestinationIds.length ? 'filter' : null, receivedAt, fannedOutAt: now,
    }
    : { messageId, sourceId, eventType: type, destinationIds: [], filteredDestinationIds: decision.destinationIds, filterReason: decision.reason, receivedAt, fannedOutAt: now };
}
