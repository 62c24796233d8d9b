import { Counter, Gauge, Histogram, LATENCY_BUCKETS, type Registry } from '@switchyard/platform/metrics';

/** The ingest hop's metrics. Labels stay low-cardinality: route, status, call type, reason. */
export function ingestMetrics(registry: Registry) {
  return {
    requests: new Counter({ name: 'ingest_http_requests_total', help: 'Tracking API requests by route and status', labelNames: ['route', 'status'], registers: [registry] }),
    inFlight: new Gauge({ name: 'ingest_http_in_flight_requests', help: 'Tracking API requests being handled', registers: [registry] }),
    receivedBytes: new Counter({ name: 'ingest_received_bytes_total', help: 'Request body bytes as received (before decompression)', registers: [registry] }),
    requestDuration: new Histogram({ name: 'ingest_http_request_duration_seconds', help: 'Time from request body read to response', labelNames: ['route'], buckets: LATENCY_BUCKETS, registers: [registry] }),
    accepted: new Counter({ name: 'ingest_events_accepted_total', help: 'Events written to the ingest topic, by type', labelNames: ['type'], registers: [registry] }),
    rejected: new Counter({ name: 'ingest_events_rejected_total', help: 'Events refused, by type and reason', labelNames: ['type', 'reason'], registers: [registry] }),
    kafkaAck: new Histogram({ name: 'ingest_kafka_ack_seconds', help: 'Time for Kafka to acknowledge one batched produce request (acks=all)', buckets: LATENCY_BUCKETS, registers: [registry] }),
    kafkaBatchRecords: new Histogram({ name: 'ingest_kafka_batch_records', help: 'Records per produce request', buckets: [1, 5, 20, 100, 500, 2000, 10000], registers: [registry] }),
    kafkaErrors: new Counter({ name: 'ingest_kafka_errors_total', help: 'Produce requests that failed or timed out (answered 503)', registers: [registry] }),
  };
}

export type IngestMetrics = ReturnType<typeof ingestMetrics>;
