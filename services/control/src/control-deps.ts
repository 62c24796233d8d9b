import type { AdminMetrics } from './admin-metrics.js';
import type { ConfigView } from '@switchyard/platform/config-view/config-view';
import type { destinationSchemas } from './api-schemas.js';
import type { notificationEndpointSchema } from './notification-endpoints.js';
import type { ConfigStore } from './config-store.js';
import type { Delete, DeliveryTask } from '@switchyard/platform/schemas/generated';
import type { DeadLetterIndex } from './dead-letter-index.js';
import type { MessageTraceIndex } from './message-trace-index.js';
import type { UsageTotals } from './usage-index.js';
import type { LiveTail } from './live-tail.js';
import type { ReplayIndex } from './replay-index.js';

/** Writes records into the pipeline (deletion notifications, replayed tasks). */
export interface EventWriter {
  writeDeletes(events: Delete[]): Promise<void>;
  /** Writes delivery tasks to the delivery topic (dead-letter replay). */
  writeTasks(tasks: DeliveryTask[]): Promise<void>;
}

/** What the admin routes need, passed in (tests give a fake clock). */
export interface ControlDeps {
  view: ConfigView;
  store: ConfigStore;
  clock: () => number;
  destinationSchemas: ReturnType<typeof destinationSchemas>;
  notificationEndpointSchema: ReturnType<typeof notificationEndpointSchema>;
  events: EventWriter;
  deadLetters: DeadLetterIndex;
  /** The per-message trace (delivery-attempts topic). */
  traces: MessageTraceIndex;
  /** Calls per source per day (usage topic). */
  usage: UsageTotals;
  /** The debugger's live feed of each source's calls. */
  live: LiveTail;
  /** Time-range replays into one destination (replays topic). */
  replays: ReplayIndex;
  /** The admin API's counters (requests are counted by a hook; routes add what only they know). */
  metrics: AdminMetrics;
}
