import type { Admin, Consumer, Producer } from '../kafkajs/index.js';
import type { Lifecycle } from '../lifecycle.js';
import { failureWatch } from './failure-watch.js';

/**
 * Connects a Kafka client, marks the readiness check `name` while connected, and registers its
 * disconnect with the lifecycle so shutdown leaves the group and flushes in order. While kafkajs
 * retries the connect, /readyz names the broker it cannot reach (failure-watch.ts).
 */
export async function connectClient(lifecycle: Lifecycle, name: string, client: Producer | Consumer | Admin | { connect(): Promise<void>; disconnect(): Promise<void> }): Promise<void> {
  lifecycle.readiness.set(name, false, () => failureWatch.unreachable());
  await client.connect();
  lifecycle.readiness.set(name, true);
  lifecycle.onShutdown(name, () => client.disconnect());
}

/**
 * A consumer is ready once it has joined its group (until then it processes nothing); a crash makes
 * it unready until kafkajs has restarted it and it joined again.
 */
export function trackGroupMembership(lifecycle: Lifecycle, consumer: Consumer, name = 'consumer-group'): void {
  lifecycle.readiness.set(name, false);
  consumer.on(consumer.events.GROUP_JOIN, () => lifecycle.readiness.set(name, true));
  consumer.on(consumer.events.CRASH, () => lifecycle.readiness.set(name, false));
}
