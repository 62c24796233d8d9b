import type { ConfigView } from '@switchyard/platform/config-view/config-view';
import type { Logger } from '@switchyard/platform/logger';
import { Counter, Gauge, initialiseCounter, type Registry } from '@switchyard/platform/metrics';
import type { DeadLetter, DeliveryTask, DestinationHealth, Replay, ReplayProgress } from '@switchyard/platform/schemas/generated';
import { change, type ConfigStore } from './config-store.js';
import { disabledForFailing } from './disabled-state.js';
import { isNotificationEndpoint, NOTIFICATION_TYPES, notificationTasks, type Notification } from './notification-endpoints.js';
import { DeadLetterWindows, FailingNotices, shouldDisable } from './notification-rules.js';

export function notifierMetrics(registry: Registry, view: Pick<ConfigView, 'state'>) {
  const registers = [registry];
  const metrics = {
    disabled: new Counter({ name: 'control_destinations_auto_disabled_total', help: 'Destinations this instance disabled because every attempt failed for SWITCHYARD_DISABLE_AFTER', registers }),
    disabledNow: new Gauge({
      name: 'control_destinations_disabled', help: 'Destinations now disabled, by reason (failing: by Switchyard; manual: by an operator)', labelNames: ['reason'], registers,
      collect() {
        let failing = 0; let manual = 0;
        for (const d of view.state.destinations()) if (!d.enabled && !isNotificationEndpoint(d)) { if (d.disabledReason === 'failing') failing++; else manual++; }
        this.set({ reason: 'failing' }, failing);
        this.set({ reason: 'manual' }, manual);
      },
    }),
    notifications: new Counter({ name: 'control_notifications_total', help: 'Notification tasks written to the delivery topic (written) or not (failed), by notification type; delivery counts their requests (delivery_notifications_total)', labelNames: ['type', 'result'], registers }),
  };
  initialiseCounter(metrics.notifications, { type: NOTIFICATION_TYPES, result: ['written', 'failed'] });
  return metrics;
}

export interface NotifierDeps {
  /** Only its state is read, so tests give a ConfigState of their own. */
  view: Pick<ConfigView, 'state'>;
  store: Pick<ConfigStore, 'write'>;
  writeTasks: (tasks: DeliveryTask[]) => Promise<void>;
  clock: () => number;
  logger: Logger;
  metrics: ReturnType<typeof notifierMetrics>;
  disableAfterMs: number;
  /** This instance's start: records older than it were the predecessor's to act on (notifications only; disabling is idempotent). */
  startedAt: number;
}

/**
 * Disables failing destinations and sends notifications (docs/decisions/0019-auto-disable-and-notifications.md).
 * It reads what delivery reports (the failing clocks), the dead letters and the replays' progress,
 * decides with notification-rules.ts, and writes configuration (a disabled destination) and
 * notification tasks (the delivery topic, like a dead-letter replay). Nothing about a
 * notification endpoint is ever notified, and they are never disabled: a failing notification
 * endpoint would otherwise notify about itself.
 */
export class Notifier {
  private readonly failing = new FailingNotices();
  private readonly deadLetters: DeadLetterWindows;
  private readonly disabling = new Set<string>();
  private readonly replaysNotified = new Set<string>();

  constructor(private readonly deps: NotifierDeps) {
    this.deadLetters = new DeadLetterWindows(deps.startedAt);
  }

  /** A failing clock read from the destination-state topic. */
  async onHealth(h: DestinationHealth): Promise<void> {
    const destination = this.deps.view.state.destination(h.destinationId);
    if (!destination || isNotificationEndpoint(destination)) return;
    if (this.failing.observe(h) && h.at >= this.deps.startedAt) {
      await this.notify({ type: 'destination.failing', key: `${h.destinationId}:${h.failingSince}`, at: this.deps.clock(), data: { destinationId: h.destinationId, sourceId: destination.sourceId, failingSince: iso(h.failingSince!), lastFailureAt: iso(h.lastFailureAt ?? h.failingSince!) } });
    }
    if (!shouldDisable(h, destination, this.deps.disableAfterMs) || this.disabling.has(h.destinationId)) return;
    this.disabling.add(h.destinationId);
    try {
      const now = this.deps.clock();
      // A keyed upsert: several control instances may each write it; the last one wins with the same content but disabledAt.
      await this.deps.store.write(change.putDestination(disabledForFailing(destination, now)));
      this.deps.metrics.disabled.inc();
      this.deps.logger.warn({ destinationId: h.destinationId, failingSince: h.failingSince, disableAfterMs: this.deps.disableAfterMs }, 'destination disabled: every attempt failed for SWITCHYARD_DISABLE_AFTER');
      await this.notify({ type: 'destination.disabled', key: `${h.destinationId}:${h.failingSince}`, at: now, data: { destinationId: h.destinationId, sourceId: destination.sourceId, reason: 'failing', failingSince: iso(h.failingSince!), disabledAt: iso(now) } });
    } catch (err) {
      this.deps.logger.error({ err, destinationId: h.destinationId }, 'disabling a failing destination failed; the next report tries again');
    } finally {
      this.disabling.delete(h.destinationId);
    }
  }

  /** A dead letter read from the dead-letter topic: counted into its destination's window. */
  onDeadLetter(letter: DeadLetter): void {
    const destination = this.deps.view.state.destination(letter.task.destinationId);
    if (letter.task.sourceId === '' || (destination && isNotificationEndpoint(destination))) return;
    this.deadLetters.add({ destinationId: letter.task.destinationId, sourceId: letter.task.sourceId, reason: letter.reason, failedAt: letter.failedAt });
  }

  /** A replay's progress read from the replays topic: its end is notified once. */
  async onReplayProgress(replay: Replay | undefined, p: ReplayProgress): Promise<void> {
    if (p.state === 'running' || p.updatedAt < this.deps.startedAt || this.replaysNotified.has(p.id)) return;
    this.replaysNotified.add(p.id);
    await this.notify({
      type: 'replay.completed', key: p.id, at: this.deps.clock(),
      data: { replayId: p.id, destinationId: replay?.destinationId ?? null, state: p.state, scanned: p.scanned, matched: p.matched, enqueued: p.enqueued, error: p.error },
    });
  }

  /** Sends the dead-letter windows that ended; called every few seconds. */
  async tick(): Promise<void> {
    for (const w of this.deadLetters.due(this.deps.clock())) {
      await this.notify({ type: 'message.dead_lettered', key: `${w.destinationId}:${w.from}`, at: this.deps.clock(), data: { destinationId: w.destinationId, sourceId: w.sourceId, from: iso(w.from), to: iso(w.to), count: w.count, reasons: w.reasons } });
    }
  }

  private async notify(n: Notification): Promise<void> {
    const tasks = notificationTasks(n, this.deps.view.state.destinations());
    if (tasks.length === 0) return;
    try {
      await this.deps.writeTasks(tasks);
      this.deps.metrics.notifications.inc({ type: n.type, result: 'written' }, tasks.length);
    } catch (err) {
      this.deps.metrics.notifications.inc({ type: n.type, result: 'failed' }, tasks.length);
      this.deps.logger.warn({ err, type: n.type, key: n.key }, 'notification not written');
    }
  }
}

function iso(ms: number): string { return new Date(ms).toISOString(); }
