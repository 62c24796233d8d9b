import type { Admin, Producer } from '../kafkajs/index.js';
import type { ConsumerClient } from '../consuming/consumer-client.js';
import type { Lifecycle } from '../lifecycle.js';
import { failureWatch } from './failure-watch.js';

/**
 * How long a start-up connect may go on failing to reach a broker before the service stops, naming
 * it (docs/decisions/0015-kafka-security-variables.md): below the 30 s in which an operator should
 * see why, above a broker's restart.
 */
export const STARTUP_UNREACHABLE_MS = 15_000;

/**
 * Connects a Kafka client, marks the readiness check `name` while connected, and registers its
 * disconnect with the lifecycle so shutdown leaves the group and flushes in order. While kafkajs
 * retries the connect, /readyz names the broker it cannot reach (failure-watch.ts).
 */
export async function connectClient(lifecycle: Lifecycle, name: string, client: Producer | Admin | { connect(): Promise<void>; disconnect(): Promise<void> }): Promise<void> {
  lifecycle.readiness.set(name, false, () => failureWatch.unreachable());
  const started = Date.now();
  const deadline = setInterval(() => {
    if (Date.now() - started >= STARTUP_UNREACHABLE_MS && failureWatch.stopIfUnreachable()) clearInterval(deadline);
  }, 1000);
  deadline.unref();
  try {
    await client.connect();
  } finally {
    clearInterval(deadline);
  }
  failureWatch.reachable();
  lifecycle.readiness.set(name, true);
  lifecycle.onShutdown(name, () => client.disconnect());
}

/**
 * A consumer is ready once it has joined its group (until then it processes nothing); a crash makes
 * it unready until kafkajs has restarted it and it joined again.
 */
export function trackGroupMembership(lifecycle: Lifecycle, consumer: Pick<ConsumerClient, 'on'>, name = 'consumer-group'): void {
  lifecycle.readiness.set(name, false);
  consumer.on('assigned', () => lifecycle.readiness.set(name, true));
  consumer.on('crashed', () => lifecycle.readiness.set(name, false));
}
