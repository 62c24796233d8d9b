// Where an event's time goes, hop by hop, from what the pipeline itself records: the trace records
// on the delivery-attempts topic carry when ingest received the event (receivedAt), when fan-out
// decided its tasks (FanoutTrace.fannedOutAt, written in the same transaction as the tasks) and
// when delivery started its first request (DeliveryAttempt.at). With the bench's own clock for the
// acknowledgement and the arrival (one machine, one clock), that splits ack → arrival into hops.
// With `--task-hops`, the watcher also reads the delivery topic (read_committed, as delivery does)
// and splits fan-out's decision → delivery's first request further: → the task's produce timestamp
// (fan-out's work on the batch, then AddPartitionsToTxn: kafkajs stamps a produce request as it
// encodes it), → the task visible to a reader (the rest of the transaction, its commit markers, the
// watcher's fetch), → delivery's first request (delivery's fetch and dispatch; negative when the
// busy bench process reads later than delivery does).
import { randomUUID } from 'node:crypto';
import type { Consumer } from '@switchyard/platform/kafkajs/index';
import type { AvroCodec } from '@switchyard/platform/codec/avro-codec';
import { quantile } from './load.js';
import { benchCodec, rawKafka, type StackRef } from './pipeline.js';

export interface HopTimes { receivedAt: number; fannedOutAt?: number; firstAttemptAt?: number; producedAt?: number; visibleAt?: number }

/** Follows a pipeline's delivery-attempts topic from "now" and keeps each message's hop times. */
export class HopWatcher {
  readonly times = new Map<string, HopTimes>();
  private readonly consumers: Consumer[] = [];
  private readonly codec: AvroCodec;

  /** `tasksTopic`: also note when each task was produced and when a read_committed reader first saw it. */
  constructor(private readonly stack: StackRef, private readonly topic: string, private readonly tasksTopic?: string) {
    this.codec = benchCodec(stack);
  }

  async start(): Promise<this> {
    await this.follow(this.topic, async (messages) => {
      for (const m of messages) {
        let decoded;
        try { decoded = await this.codec.decode(m.value); } catch { continue; }
        if (decoded.name !== 'io.switchyard.pipeline.TraceRecords') continue;
        for (const f of decoded.value.fanouts) this.entry(f.messageId, f.receivedAt).fannedOutAt ??= f.fannedOutAt;
        for (const a of decoded.value.attempts) {
          if (a.attempt !== 1) continue;
          const e = this.entry(a.messageId, a.receivedAt);
          e.firstAttemptAt = Math.min(e.firstAttemptAt ?? Infinity, a.at);
        }
      }
    });
    if (this.tasksTopic) {
      await this.follow(this.tasksTopic, async (messages) => {
        const seen = Date.now();
        for (const m of messages) {
          let decoded;
          try { decoded = await this.codec.decode(m.value); } catch { continue; }
          if (decoded.name !== 'io.switchyard.pipeline.DeliveryTask') continue;
          const e = this.entry(decoded.value.messageId, decoded.value.receivedAt);
          e.producedAt ??= Number(m.timestamp);
          e.visibleAt ??= seen;
        }
      });
    }
    return this;
  }

  /** Reads `topic` from its end offsets seen now: nothing of the load is missed, nothing older read. */
  private async follow(topic: string, onBatch: (messages: Array<{ value: Buffer | null; timestamp: string }>) => Promise<void>): Promise<void> {
    const kafka = rawKafka(this.stack, 'bench-hops');
    const admin = kafka.admin();
    await admin.connect();
    const ends = await admin.fetchTopicOffsets(topic);
    await admin.disconnect();
    const consumer = kafka.consumer({ groupId: `bench-hops-${randomUUID()}`, minBytes: 1, maxWaitTimeInMs: 100 });
    this.consumers.push(consumer);
    await consumer.connect();
    await consumer.subscribe({ topic, fromBeginning: false });
    let joined!: () => void;
    const ready = new Promise<void>((r) => { joined = r; });
    consumer.on(consumer.events.GROUP_JOIN, () => {
      for (const e of ends) consumer.seek({ topic, partition: e.partition, offset: e.high });
      joined();
    });
    await consumer.run({ eachBatch: ({ batch }) => onBatch(batch.messages) });
    await ready;
  }

  /** Waits until every id has its first attempt recorded (delivery flushes its trace every 100 ms), or the time is up. */
  async waitFor(ids: string[], timeoutMs: number): Promise<void> {
    const until = Date.now() + timeoutMs;
    while (Date.now() < until && !ids.every((id) => this.times.get(id)?.firstAttemptAt !== undefined)) await new Promise((r) => setTimeout(r, 100));
  }

  async stop(): Promise<void> {
    await Promise.all(this.consumers.map((c) => c.disconnect()));
  }

  private entry(messageId: string, receivedAt: number): HopTimes {
    let e = this.times.get(messageId);
    if (!e) this.times.set(messageId, (e = { receivedAt }));
    return e;
  }
}

export interface HopSummary {
  /** ingest's receipt → the client's 200 (ingest: parse, produce, acks=all). */
  ingest: { p50: number; p99: number };
  /** the 200 → fan-out decided the tasks (its fetch of the ingest topic). */
  toFanout: { p50: number; p99: number };
  /** fan-out's decision → delivery's first request (fan-out's transaction commit, delivery's fetch, dispatch). */
  toDelivery: { p50: number; p99: number };
  /** delivery's first request → the receiver has the body (HTTP on loopback). */
  http: { p50: number; p99: number };
  /** Messages with every hop recorded. */
  samples: number;
  /**
   * With task times (`--task-hops`), toDelivery split: decision → the task's produce timestamp,
   * → the task visible to a read_committed reader, → delivery's first request (may be negative:
   * the watcher's fetch and delivery's are independent).
   */
  tasks?: { toProduce: { p50: number; p99: number }; toVisible: { p50: number; p99: number }; toDispatch: { p50: number; p99: number }; samples: number };
}

/** p50/p99 of each hop over the messages with every time known. */
export function summariseHops(ids: string[], acks: Map<string, number>, arrivals: Map<string, number>, times: Map<string, HopTimes>): HopSummary {
  const hops = { ingest: [] as number[], toFanout: [] as number[], toDelivery: [] as number[], http: [] as number[] };
  const tasks = { toProduce: [] as number[], toVisible: [] as number[], toDispatch: [] as number[] };
  for (const id of ids) {
    const t = times.get(id);
    const ack = acks.get(id);
    const arrival = arrivals.get(id);
    if (!t || ack === undefined || arrival === undefined || t.fannedOutAt === undefined || t.firstAttemptAt === undefined) continue;
    hops.ingest.push(ack - t.receivedAt);
    hops.toFanout.push(t.fannedOutAt - ack);
    hops.toDelivery.push(t.firstAttemptAt - t.fannedOutAt);
    hops.http.push(arrival - t.firstAttemptAt);
    if (t.producedAt === undefined || t.visibleAt === undefined) continue;
    tasks.toProduce.push(t.producedAt - t.fannedOutAt);
    tasks.toVisible.push(t.visibleAt - t.producedAt);
    tasks.toDispatch.push(t.firstAttemptAt - t.visibleAt);
  }
  const q = (v: number[]) => ({ p50: quantile(v, 0.5), p99: quantile(v, 0.99) });
  return {
    ingest: q(hops.ingest), toFanout: q(hops.toFanout), toDelivery: q(hops.toDelivery), http: q(hops.http), samples: hops.http.length,
    ...(tasks.toVisible.length ? { tasks: { toProduce: q(tasks.toProduce), toVisible: q(tasks.toVisible), toDispatch: q(tasks.toDispatch), samples: tasks.toVisible.length } } : {}),
  };
}
