import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConfigState, type Destination } from '@switchyard/platform/config-view/config-state';
import { createLogger } from '@switchyard/platform/logger';
import { Registry } from '@switchyard/platform/metrics';
import type { DeadLetter, DeliveryTask, DestinationHealth, Replay, ReplayProgress } from '@switchyard/platform/schemas/generated';
import { change, type ConfigChange } from './config-store.js';
import { newNotificationEndpoint, NOTIFICATION_TYPES } from './notification-endpoints.js';
import { DEAD_LETTER_GRACE_MS, DEAD_LETTER_WINDOW_MS } from './notification-rules.js';
import { Notifier, notifierMetrics } from './notifier.js';

const MINUTE = 60_000;
const DAY = 86_400_000;
// A whole minute, so dead-letter windows start on it.
const STARTED = 1_700_000_040_000 - (1_700_000_040_000 % MINUTE);

function webhooks(id: string, updatedAt: number): Destination {
  return {
    id, sourceId: 'src_1', name: id, type: 'webhooks', enabled: true, sharedSecret: null,
    webhooks: [{ url: 'https://hooks.example.com/in', headers: {}, clientCertificate: null }], createdAt: updatedAt, updatedAt,
    filter: null, standardSignatures: false, signingSecrets: [], rateLimit: null, retry: null, disabledReason: null, disabledAt: null, notificationTypes: [],
  };
}

interface Options { writeTasks?: (tasks: DeliveryTask[]) => Promise<void>; write?: (changes: ConfigChange[]) => Promise<void>; startedAt?: number }

/**
 * A notifier over a ConfigState holding dst_1 (changed 10 days before the start), nep_all (every
 * notification type) and nep_replays (replay.completed only); the store applies what it writes.
 */
function notifier(opts: Options = {}) {
  let now = STARTED + 1_000;
  const state = new ConfigState();
  const put = (d: Destination) => state.apply(change.putDestination(d).key, change.putDestination(d).record);
  put(webhooks('dst_1', STARTED - 10 * DAY));
  put(newNotificationEndpoint({ id: 'nep_all', url: 'https://ops.example.com/all', eventTypes: NOTIFICATION_TYPES }, STARTED - DAY).endpoint);
  put(newNotificationEndpoint({ id: 'nep_replays', url: 'https://ops.example.com/replays', eventTypes: ['replay.completed'] }, STARTED - DAY).endpoint);
  const tasks: DeliveryTask[] = [];
  const writes: ConfigChange[][] = [];
  const logs: Array<{ level: string; msg: string }> = [];
  const metrics = notifierMetrics(new Registry(), { state });
  const n = new Notifier({
    view: { state },
    store: { write: async (...changes) => { await opts.write?.(changes); writes.push(changes); for (const c of changes) state.apply(c.key, c.record); } },
    writeTasks: async (t) => { await opts.writeTasks?.(t); tasks.push(...t); },
    clock: () => now,
    logger: createLogger({ service: 'test', level: 'info', destination: { write: (line: string) => void logs.push(JSON.parse(line) as { level: string; msg: string }) } }),
    metrics,
    disableAfterMs: 5 * DAY,
    startedAt: opts.startedAt ?? STARTED,
  });
  return { n, state, tasks, writes, logs, metrics, advanceTo: (t: number) => { now = t; }, now: () => now };
}

const health = (fields: Partial<DestinationHealth>): DestinationHealth => ({ destinationId: 'dst_1', failingSince: STARTED, lastFailureAt: STARTED, at: STARTED, writer: 'w1', ...fields });
const body = (t: DeliveryTask) => JSON.parse(t.body) as { type: string; timestamp: string; data: Record<string, unknown> };
const summary = (tasks: DeliveryTask[]) => tasks.map((t) => [t.destinationId, t.eventType]);
/** A counter's or gauge's value summed over the series with these labels (a gauge's collect runs first). */
async function count(metric: { get(): Promise<{ values: Array<{ labels: Record<string, string | number | undefined>; value: number }> }> }, labels: Record<string, string> = {}): Promise<number> {
  const { values } = await metric.get();
  return values.filter((v) => Object.entries(labels).every(([k, x]) => v.labels[k] === x)).reduce((sum, v) => sum + v.value, 0);
}

function deadLetter(fields: { destinationId?: string; sourceId?: string; reason: string; failedAt: number }): DeadLetter {
  const task: DeliveryTask = {
    taskId: `t-${fields.failedAt}`, messageId: `m-${fields.failedAt}`, sourceId: fields.sourceId ?? 'src_1', destinationId: fields.destinationId ?? 'dst_1', eventType: 'track', userKey: 'u',
    body: '{}', receivedAt: fields.failedAt, createdAt: fields.failedAt, attempt: 3, firstAttemptAt: fields.failedAt, deadline: null, notBefore: null, pendingUrls: null, lastStatus: 500, lastError: null,
  };
  return { reason: fields.reason, status: 500, responseExcerpt: null, error: null, failedAt: fields.failedAt, task };
}

const replay: Replay = { id: 'rpl_1', destinationId: 'dst_1', sourceId: 'src_1', from: STARTED - DAY, to: STARTED, filter: null, rate: 500, createdAt: STARTED, cancelRequestedAt: null };
const progress = (fields: Partial<ReplayProgress>): ReplayProgress => ({ id: 'rpl_1', state: 'running', partitions: [], scanned: 10, matched: 8, enqueued: 8, startedAt: STARTED, updatedAt: STARTED + 500, runningMs: 400, error: null, ...fields });

describe('Notifier: disabling failing destinations and notifying', () => {
  it('a failing period sends destination.failing once, to the endpoints subscribed to it, signed under an id of the fact', async () => {
    const { n, tasks, metrics } = notifier();
    await n.onHealth(health({ at: STARTED + 100 }));
    await n.onHealth(health({ lastFailureAt: STARTED + 10_000, at: STARTED + 10_000 }));
    assert.deepEqual(summary(tasks), [['nep_all', 'destination.failing']]);
    const [task] = tasks;
    assert.equal(task!.sourceId, '', 'fan-out never picks a task of no source');
    assert.equal(task!.taskId, `${task!.messageId}:nep_all`);
    assert.deepEqual(body(task!), { type: 'destination.failing', timestamp: new Date(STARTED + 1_000).toISOString(), data: { destinationId: 'dst_1', sourceId: 'src_1', failingSince: new Date(STARTED).toISOString(), lastFailureAt: new Date(STARTED).toISOString() } });
    assert.equal(await count(metrics.notifications, { type: 'destination.failing', result: 'written' }), 1);
  });

  it('every instance gives the same fact the same message id, whenever it sends it', async () => {
    const a = notifier();
    const b = notifier({ startedAt: STARTED - MINUTE });
    b.advanceTo(STARTED + 30_000);
    await a.n.onHealth(health({ at: STARTED + 100 }));
    await b.n.onHealth(health({ at: STARTED + 100 }));
    assert.equal(a.tasks[0]!.messageId, b.tasks[0]!.messageId);
  });

  it('a failing period recorded before this instance started is its predecessor\'s to notify', async () => {
    const { n, tasks } = notifier();
    await n.onHealth(health({ failingSince: STARTED - 2_000, lastFailureAt: STARTED - 1_000, at: STARTED - 1_000 }));
    assert.deepEqual(tasks, []);
  });

  it('disables a destination failing for SWITCHYARD_DISABLE_AFTER, counts it, says why and tells the endpoints, once', async () => {
    const { n, state, tasks, writes, metrics, logs } = notifier();
    await n.onHealth(health({ failingSince: STARTED - 5 * DAY, lastFailureAt: STARTED - 1, at: STARTED - 1 }));
    assert.equal(writes.length, 0, 'a failure less than 5 days after the first is not enough');
    await n.onHealth(health({ failingSince: STARTED - 5 * DAY, lastFailureAt: STARTED, at: STARTED + 600 }));
    const stored = state.destination('dst_1')!;
    assert.deepEqual([stored.enabled, stored.disabledReason, stored.disabledAt, stored.updatedAt], [false, 'failing', STARTED + 1_000, STARTED + 1_000]);
    assert.equal(await count(metrics.disabled), 1);
    assert.ok(logs.some((l) => l.level === 'warn' && l.msg.startsWith('destination disabled')));
    assert.deepEqual(summary(tasks).filter(([, type]) => type === 'destination.disabled'), [['nep_all', 'destination.disabled']]);
    assert.equal(body(tasks.at(-1)!).data.reason, 'failing');
    assert.deepEqual([await count(metrics.disabledNow, { reason: 'failing' }), await count(metrics.disabledNow, { reason: 'manual' })], [1, 0], 'none disabled by an operator');

    await n.onHealth(health({ failingSince: STARTED - 5 * DAY, lastFailureAt: STARTED + 20_000, at: STARTED + 20_000 }));
    assert.equal(writes.length, 1, 'a disabled destination is not disabled again');
  });

  it('the failing period counts from the destination\'s last change: enabling it again gives it a full period', async () => {
    const { n, state, writes } = notifier();
    const d = state.destination('dst_1')!;
    state.apply(change.putDestination({ ...d, updatedAt: STARTED - DAY }).key, change.putDestination({ ...d, updatedAt: STARTED - DAY }).record);
    await n.onHealth(health({ failingSince: STARTED - 10 * DAY, lastFailureAt: STARTED + 500, at: STARTED + 500 }));
    assert.equal(writes.length, 0);
  });

  it('a failed disabling write is logged, not thrown, and the next report tries again', async () => {
    let fail = true;
    const { n, state, logs } = notifier({ write: async () => { if (fail) throw new Error('not the leader'); } });
    const record = health({ failingSince: STARTED - 6 * DAY, lastFailureAt: STARTED + 500, at: STARTED + 500 });
    await n.onHealth(record);
    assert.equal(state.destination('dst_1')!.enabled, true);
    assert.ok(logs.some((l) => l.level === 'error' && l.msg.startsWith('disabling a failing destination failed')));
    fail = false;
    await n.onHealth({ ...record, lastFailureAt: STARTED + 10_500, at: STARTED + 10_500 });
    assert.equal(state.destination('dst_1')!.disabledReason, 'failing');
  });

  it('a notification endpoint is never disabled nor notified about, and its dead letters count for nothing', async () => {
    const { n, state, tasks, writes, advanceTo } = notifier();
    await n.onHealth(health({ destinationId: 'nep_replays', failingSince: STARTED - 30 * DAY, lastFailureAt: STARTED + 500, at: STARTED + 500 }));
    assert.equal(state.destination('nep_replays')!.enabled, true);
    n.onDeadLetter(deadLetter({ destinationId: 'nep_all', sourceId: '', reason: 'deadline', failedAt: STARTED + 1_000 }));
    advanceTo(STARTED + 10 * MINUTE);
    await n.tick();
    assert.deepEqual([tasks, writes], [[], []]);
  });

  it('dead letters: one message.dead_lettered per destination and minute, with counts by reason, once the minute and its grace are over', async () => {
    const { n, tasks, advanceTo } = notifier();
    const minute = STARTED + MINUTE;
    for (const [reason, at] of [['deadline', 1_000], ['deadline', 20_000], ['permanent_status', 59_999]] as const) n.onDeadLetter(deadLetter({ reason, failedAt: minute + at }));
    n.onDeadLetter(deadLetter({ reason: 'deadline', failedAt: minute + MINUTE }));
    advanceTo(minute + DEAD_LETTER_WINDOW_MS + DEAD_LETTER_GRACE_MS - 1);
    await n.tick();
    assert.deepEqual(tasks, [], 'not before the grace period for letters still on their way');
    advanceTo(minute + DEAD_LETTER_WINDOW_MS + DEAD_LETTER_GRACE_MS);
    await n.tick();
    await n.tick();
    assert.deepEqual(summary(tasks), [['nep_all', 'message.dead_lettered']]);
    assert.deepEqual(body(tasks[0]!).data, { destinationId: 'dst_1', sourceId: 'src_1', from: new Date(minute).toISOString(), to: new Date(minute + MINUTE).toISOString(), count: 3, reasons: { deadline: 2, permanent_status: 1 } });
    advanceTo(minute + 2 * DEAD_LETTER_WINDOW_MS + DEAD_LETTER_GRACE_MS);
    await n.tick();
    assert.equal(tasks.length, 2, 'the next minute on its own');
  });

  it('replay.completed once per replay end, to every endpoint subscribed; running and ends before the start say nothing', async () => {
    const { n, tasks } = notifier();
    await n.onReplayProgress(replay, progress({ state: 'running' }));
    await n.onReplayProgress(replay, progress({ id: 'rpl_old', state: 'done', updatedAt: STARTED - 1 }));
    assert.deepEqual(tasks, []);
    await n.onReplayProgress(replay, progress({ state: 'done', scanned: 20, matched: 15, enqueued: 15 }));
    await n.onReplayProgress(replay, progress({ state: 'done' }));
    assert.deepEqual(summary(tasks).sort(), [['nep_all', 'replay.completed'], ['nep_replays', 'replay.completed']]);
    assert.deepEqual(body(tasks[0]!).data, { replayId: 'rpl_1', destinationId: 'dst_1', state: 'done', scanned: 20, matched: 15, enqueued: 15, error: null });
  });

  it('tasks that cannot be written are counted failed, per endpoint, and logged, never thrown', async () => {
    const { n, metrics, logs } = notifier({ writeTasks: async () => { throw new Error('broker gone'); } });
    await n.onReplayProgress(replay, progress({ state: 'failed', error: 'destination deleted' }));
    assert.equal(await count(metrics.notifications, { type: 'replay.completed', result: 'failed' }), 2);
    assert.equal(await count(metrics.notifications, { result: 'written' }), 0);
    assert.ok(logs.some((l) => l.level === 'warn' && l.msg === 'notification not written'));
  });
});
