import { Registry, collectDefaultMetrics, Counter, Gauge, Histogram } from 'prom-client';

export { Registry, Counter, Gauge, Histogram };

/**
 * One Prometheus registry per process, with Node's default process metrics and the
 * `service` label on every series so one dashboard can tell the hops apart.
 */
export function createMetricsRegistry(service: string): Registry {
  const registry = new Registry();
  registry.setDefaultLabels({ service });
  collectDefaultMetrics({ register: registry });
  return registry;
}

/** Latency buckets in seconds, from 1 ms to 30 s: Kafka acks, HTTP requests, end-to-end. */
export const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
