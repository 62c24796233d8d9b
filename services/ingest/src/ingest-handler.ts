import type { AvroCodec } from '@switchyard/platform/codec/avro-codec';
import type { ConfigState } from '@switchyard/platform/config-view/config-state';
import { recordBytes, type BatchingProducer, type OutgoingRecord } from '@switchyard/platform/kafka/batching-producer';
import { originHeaders } from '@switchyard/platform/kafka/record-origin';
import type { TopicNames } from '@switchyard/platform/kafka/topics';
import type { UsageOutcome } from '@switchyard/platform/usage/usage-tally';
import { CALL_TYPES, normalizeEvent, type CallType, type Rejected } from './event-rules.js';
import type { IngestMetrics } from './ingest-metrics.js';
import { decodeBody, IngestError, MAX_REQUEST_BYTES, MAX_WRITE_BYTES, parseJsonBody, writeKeyOf } from './request-body.js';
import { sourceOfWriteKey, type Refusals, type WriteKeyDeps } from './write-key-auth.js';

export interface IngestDeps extends WriteKeyDeps {
  config: ConfigState;
  codec: AvroCodec;
  batcher: BatchingProducer;
  topics: TopicNames;
  metrics: IngestMetrics;
  clock: () => number;
  newMessageId: () => string;
  /** How long to wait for Kafka before answering 503. */
  ackTimeoutMs: number;
  /** Usage per source and day (accepted / rejected once the write key named the source). */
  countUsage?: (sourceId: string, at: number, outcome: UsageOutcome, n: number) => void;
  /**
   * False until the configuration (sources, write keys) has been read to its end. Until then a
   * write key cannot be judged: the answer is 503 (retry), never 401 (a client drops the batch).
   */
  configLoaded?: () => boolean;
}

/** Clients drop a batch answered 401: only for a key that is surely unknown (write-key-auth.ts). */
const REFUSALS: Refusals = { status: 401, unknown: 'the write key is not valid', disabled: 'the source of this write key is disabled' };

export interface IngestRequest {
  /** `batch` for /v1/batch and /v1/import, else the call type of the single-call path. */
  route: 'batch' | CallType;
  body: Buffer;
  contentEncoding: string | undefined;
  authorization: string | undefined;
  ip: string | undefined;
}

export interface RejectedEvent { index: number; messageId: string | null; reason: string; message: string }
export type IngestResponse = { success: true; rejected?: RejectedEvent[] };

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * One tracking API request: authenticate, validate, enrich, write, answer. Request-level problems
 * throw an IngestError (4xx, nothing written). Events that break a rule inside a batch are refused
 * alone and kept on the invalid-events topic. Resolves only after Kafka acknowledged every record
 * of the request; when it cannot, throws a 503 and withdraws what was not yet sent.
 */
export async function handleIngest(deps: IngestDeps, req: IngestRequest): Promise<IngestResponse> {
  const receivedAt = deps.clock();
  if (req.body.length > MAX_REQUEST_BYTES) throw new IngestError(400, 'BODY_TOO_LARGE', `the body is over ${MAX_REQUEST_BYTES / 1024} KB`);
  const body = parseJsonBody(await decodeBody(req.body, req.contentEncoding));
  if (!isObject(body)) throw new IngestError(400, 'INVALID_BODY', 'the body must be a JSON object');

  const writeKey = writeKeyOf(req.authorization, body);
  if (deps.configLoaded && !deps.configLoaded()) throw new IngestError(503, 'NOT_READY', 'the service is still loading its configuration; retry shortly');
  if (!writeKey) throw new IngestError(401, 'MISSING_WRITE_KEY', 'send the write key as the HTTP Basic user name or as writeKey in the body');
  const source = await sourceOfWriteKey(deps, writeKey, receivedAt, REFUSALS);

  const usage = (outcome: UsageOutcome, n: number) => deps.countUsage?.(source.id, receivedAt, outcome, n);
  const single = req.route !== 'batch';
  let events: unknown[];
  if (single) events = [body];
  else if (Array.isArray(body.batch)) events = body.batch;
  // A request refused whole counts as one rejected call (its calls were not read).
  else { usage('rejected', 1); throw new IngestError(400, 'INVALID_BATCH', 'the body needs a "batch" array of calls'); }

  let batchContext: { context: Json | undefined; integrations: Json | undefined };
  try {
    batchContext = single ? { context: undefined, integrations: undefined } : { context: objectOrUndefined(body.context, 'context'), integrations: objectOrUndefined(body.integrations, 'integrations') };
  } catch (err) {
    usage('rejected', 1);
    throw err;
  }
  const facts = { sourceId: source.id, receivedAt, ip: req.ip, newMessageId: deps.newMessageId, ...batchContext, sentAt: body.sentAt };

  const records: OutgoingRecord[] = [];
  const rejected: RejectedEvent[] = [];
  const rejectedLabels: Array<{ type: string; reason: string }> = [];
  const acceptedTypes: string[] = [];
  const countRejected = () => {
    for (const labels of rejectedLabels) deps.metrics.rejected.inc(labels);
    usage('rejected', rejectedLabels.length);
  };
  let writeBytes = 0;
  // Checked while records are built, so an oversized request stops before it costs more memory.
  const add = (record: OutgoingRecord) => {
    writeBytes += recordBytes(record);
    if (writeBytes > MAX_WRITE_BYTES) {
      usage('rejected', 1);
      throw new IngestError(400, 'REQUEST_TOO_LARGE', `with batch-level context merged into each call and ids and times added, the request would write over ${MAX_WRITE_BYTES / 1024} KB; send fewer calls per request`);
    }
    records.push(record);
  };
  events.forEach((raw, index) => {
    const result = normalizeEvent(raw, single ? (req.route as CallType) : undefined, facts);
    if (result.ok) {
      // Marked as ingest's: fan-out neither checks nor counts it again (it is not a direct record).
      add({ topic: deps.topics.ingest, key: result.key, value: deps.codec.encode(result.schema, result.record as never), headers: originHeaders.ingest });
      acceptedTypes.push(result.type);
      return;
    }
    rejectedLabels.push({ type: typeLabel(result.type), reason: result.reason });
    if (single) { countRejected(); throw new IngestError(400, result.reason.toUpperCase(), result.message); }
    rejected.push({ index, messageId: result.messageId, reason: result.reason, message: result.message });
    add({ topic: deps.topics.invalidEvents, key: source.id, value: invalidRecord(deps.codec, source.id, index, raw, result, receivedAt) });
  });
  countRejected();

  const submission = deps.batcher.submit(records);
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      submission.acked,
      new Promise<never>((_, reject) => { timer = setTimeout(() => reject(new Error('timeout')), deps.ackTimeoutMs); }),
    ]);
  } catch {
    submission.cancel();
    // Refused with 503: the calls that passed the rules were not accepted either (a retry counts again).
    usage('rejected', acceptedTypes.length);
    deps.metrics.kafkaErrors.inc();
    throw new IngestError(503, 'UNAVAILABLE', 'the event store is not accepting writes right now; retry later');
  } finally {
    clearTimeout(timer);
  }
  for (const type of acceptedTypes) deps.metrics.accepted.inc({ type });
  usage('accepted', acceptedTypes.length);
  return rejected.length ? { success: true, rejected } : { success: true };
}

function objectOrUndefined(value: unknown, field: string): Json | undefined {
  if (value === undefined || value === null) return undefined;
  if (!isObject(value)) throw new IngestError(400, 'INVALID_BATCH', `batch-level ${field} must be an object`);
  return value;
}

function invalidRecord(codec: AvroCodec, sourceId: string, index: number, raw: unknown, result: Rejected, receivedAt: number): Buffer {
  return codec.encode('io.switchyard.pipeline.InvalidEvent', {
    reason: result.reason, message: result.message, stage: 'ingest', sourceId, messageId: result.messageId, batchIndex: index,
    payload: Buffer.from(JSON.stringify(raw) ?? 'null', 'utf8'), originTopic: null, originPartition: null, originOffset: null, receivedAt,
  });
}

/**
 * The `type` label of ingest_events_rejected_total: a call type, or `unknown`. A refused call's type
 * is whatever the client sent, so it never becomes a label value itself (each new one would be a
 * series for as long as the process runs).
 */
export function typeLabel(type: string | null): CallType | 'unknown' {
  return CALL_TYPES.includes(type as CallType) ? (type as CallType) : 'unknown';
}
