import { randomUUID } from 'node:crypto';
import type { AvroCodec } from '../codec/avro-codec.js';
import type { Producer } from '../kafka/client.js';
import type { Logger } from '../logger.js';
import { BoundedLabel, DEFAULT_LABEL_BOUND, type BoundedCounter, type LabelBound } from '../bounded-labels.js';
import type { Registry } from '../metrics.js';
import { UsageTally, usageKey, type FilterReason, type UsageOutcome } from './usage-tally.js';

export interface UsageRecorderOptions {
  service: string;
  producer: Pick<Producer, 'send'>;
  codec: AvroCodec;
  topic: string;
  registry: Registry;
  logger: Logger;
  /** How often changed totals are written: what a crash can lose at most. */
  intervalMs: number;
  clock?: () => number;
  /** Which sources the counter shows by id (SWITCHYARD_METRICS_SOURCES), and whether one is still configured. */
  sources?: { bound: LabelBound; exists?: (sourceId: string) => boolean };
}

/**
 * Counts calls per source and UTC day for the usage API and metrics: `count` adds to the running
 * totals in memory (and the Prometheus counter switchyard_usage_calls_total{source,outcome}); every
 * interval the changed totals go to the usage topic (acks=all). Shutdown writes the last ones. A
 * crash loses at most one interval of counts; a failed write is retried with the next.
 */
export class UsageRecorder {
  private readonly tally: UsageTally;
  private readonly calls: BoundedCounter<'outcome', 'source'>;
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> | undefined;
  private readonly clock: () => number;

  constructor(private readonly opts: UsageRecorderOptions) {
    this.tally = new UsageTally(`${opts.service}-${randomUUID()}`);
    this.clock = opts.clock ?? Date.now;
    // Per source and outcome, the sources bounded (docs/decisions/0023-bounded-metric-labels.md): the
    // usage API has every source's counts; the metric shows the most active ones, the rest in "_other".
    const sources = new BoundedLabel({ label: 'source', clock: this.clock, ...(opts.sources ?? { bound: DEFAULT_LABEL_BOUND }) });
    this.calls = sources.counter({ name: 'switchyard_usage_calls_total', help: 'Calls per source: accepted and rejected (ingest: HTTP calls; fan-out: direct records), filtered by integrations or destination filters (fan-out)', labelNames: ['source', 'outcome'], registers: [opts.registry] });
  }

  /** `at` is when ingest received the call: it decides the day. */
  count(sourceId: string, at: number, outcome: UsageOutcome, n = 1, reason?: FilterReason): void {
    if (n <= 0) return;
    this.tally.add(sourceId, at, outcome, n, reason);
    this.calls.inc({ source: sourceId, outcome }, n);
  }

  start(): void {
    this.timer = setInterval(() => void this.flush(), this.opts.intervalMs);
    this.timer.unref();
  }

  async flush(): Promise<void> {
    if (this.flushing) return this.flushing;
    this.flushing = (async () => {
      const records = this.tally.takeChanged(this.clock());
      if (records.length === 0) return;
      try {
        await this.opts.producer.send({
          topic: this.opts.topic, acks: -1,
          messages: records.map((r) => ({ key: usageKey(r), value: this.opts.codec.encode('io.switchyard.pipeline.UsageCount', r) })),
        });
      } catch (err) {
        this.tally.failed(records);
        this.opts.logger.warn({ err, records: records.length }, 'writing usage counts failed; retrying with the next interval');
      }
    })().finally(() => { this.flushing = undefined; });
    return this.flushing;
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    // Twice: counts added while a flush was in flight go with the second.
    await this.flush();
    await this.flush();
  }
}
