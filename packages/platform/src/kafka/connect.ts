import type { Admin, Consumer, Producer } from 'kafkajs';
import type { Lifecycle } from '../lifecycle.js';

/**
 * Connects a Kafka client, marks the readiness check `name` while connected, and registers its
 * disconnect with the lifecycle so shutdown leaves the group and flushes in order.
 */
export async function connectClient(lifecycle: Lifecycle, name: string, client: Producer | Consumer | Admin): Promise<void> {
  lifecycle.readiness.set(name, false);
  await client.connect();
  lifecycle.readiness.set(name, true);
  lifecycle.onShutdown(name, () => client.disconnect());
}
