import { Gauge, type Registry } from '@switchyard/platform/metrics';

/** What the control service holds in memory, read when Prometheus scrapes (no bookkeeping on the hot path). */
export interface IndexSizes {
  traces: { size: number; max: number };
  deadLetters: { size: number; max: number };
  usage: { size: number };
}

/**
 * Gauges of the in-memory indexes: the trace index (CONTROL_TRACE_INDEX_MAX), the dead-letter index
 * (DEAD_LETTER_INDEX_MAX) and the usage totals. An index at its maximum forgets its oldest entries,
 * so the trace API then reaches back less than CONTROL_TRACE_WINDOW; the dashboard shows the fill.
 */
export function registerIndexMetrics(registry: Registry, sizes: () => IndexSizes): void {
  const registers = [registry];
  const gauge = (name: string, help: string, read: (s: IndexSizes) => number) =>
    new Gauge({ name, help, registers, collect(this: Gauge) { this.set(read(sizes())); } });
  gauge('control_trace_index_messages', 'Messages the trace index holds (GET /v1/messages/{messageId})', (s) => s.traces.size);
  gauge('control_trace_index_max_messages', 'CONTROL_TRACE_INDEX_MAX: beyond it the least recently active messages are forgotten', (s) => s.traces.max);
  gauge('control_dead_letter_index_letters', 'Dead letters the index holds for listing and replay', (s) => s.deadLetters.size);
  gauge('control_dead_letter_index_max_letters', 'DEAD_LETTER_INDEX_MAX: beyond it the oldest letters are forgotten (they stay on the topic)', (s) => s.deadLetters.max);
  gauge('control_usage_index_totals', 'Usage running totals held (sources × days × writers)', (s) => s.usage.size);
}
