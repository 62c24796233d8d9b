import type { AvroCodec } from '@switchyard/platform/codec/avro-codec';
import type { ConfigState } from '@switchyard/platform/config-view/config-state';
import { recordBytes, type BatchingProducer, type OutgoingRecord } from '@switchyard/platform/kafka/batching-producer';
import { originHeaders } from '@switchyard/platform/kafka/record-origin';
import type { TopicNames } from '@switchyard/platform/kafka/topics';
import type { UsageOutcome } from '@switchyard/platform/usage/usage-tally';
import { CALL_TYPES, normalizeEvent, type CallType, type Rejected } from './event-rules.js';
import type { IngestMetrics } from './ingest-metrics.js';
import { decodeBody, MAX_REQUEST_BYTES, MAX_WRITE_BYTES, parseJsonBody, writeKeyOf } from './request-body.js';
import { callRefusalCode, trackingErrors } from './tracking-errors.js';
import { sourceOfWriteKey, type WriteKeyDeps } from './write-key-auth.js';

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
 * throw an HttpError of trackingErrors (4xx, nothing written). Events that break a rule inside a batch are refused
 * alone and kept on the invalid-events topic. Resolves only after Kafka acknowledged every record
 * of the request; when it cannot, throws a 503 and withdraws what was not yet sent.
 */
export async function handleIngest(deps: IngestDeps, req: IngestRequest): Promise<IngestResponse> {
  const receivedAt = deps.clock();
  if (req.body.length > MAX_REQUEST_BYTES) throw trackingErrors.error('BODY_TOO_LARGE', { limitBytes: MAX_REQUEST_BYTES });
  const body = parseJsonBody(await decodeBody(req.body, req.contentEncoding));
  if (!isObject(body)) throw trackingErrors.error('INVALID_BODY');

  const writeKey = writeKeyOf(req.authorization, body);
  if (deps.configLoaded && !deps.configLoaded()) throw trackingErrors.error('NOT_READY');
  if (!writeKey) throw trackingErrors.error('MISSING_WRITE_KEY');
  const source = await sourceOfWriteKey(deps, writeKey, receivedAt, trackingErrors);

  const usage = (outcome: UsageOutcome, n: number) => deps.countUsage?.(source.id, receivedAt, outcome, n);
  const single = req.route !== 'batch';
  let events: unknown[];
  if (single) events = [body];
  else if (Array.isArray(body.batch)) events = body.batch;
  // A request refused whole counts as one rejected call (its calls were not read).
  else { usage('rejected', 1); throw trackingErrors.error('INVALID_BATCH', {}); }

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
      throw trackingErrors.error('REQUEST_TOO_LARGE', { limitBytes: MAX_WRITE_BYTES });
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
    if (single) { countRejected(); throw trackingErrors.error(callRefusalCode(result.reason), { problem: result.message }); }
    rejected.push({ index, messageId: result.messageId, reason: result.reason, message: result.message });
    add({ topic: deps.topics.invalidEvents, key: source.id, value: invalidRecord(deps.codec, source.id, index, raw, result, receivedAt) });
  });
  countRejected();

  // Refused with 503: the calls that passed the rules were not accepted either (a retry counts again).
  await writeRecords(deps, records, () => usage('rejected', acceptedTypes.length));
  for (const type of acceptedTypes) deps.metrics.accepted.inc({ type });
  usage('accepted', acceptedTypes.length);
  return rejected.length ? { success: true, rejected } : { success: true };
}

/**
 * Sends a request's records and waits for Kafka's acknowledgement of them all, up to
 * ackTimeoutMs; when it does not come, withdraws what was not yet sent and refuses the request (503).
 */
async function writeRecords(deps: IngestDeps, records: OutgoingRecord[], refused: () => void): Promise<void> {
  const submission = deps.batcher.submit(records);
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      submission.acked,
      new Promise<never>((_, reject) => { timer = setTimeout(() => reject(new Error('timeout')), deps.ackTimeoutMs); }),
    ]);
  } catch {
    submission.cancel();
    refused();
    deps.metrics.kafkaErrors.inc();
    throw trackingErrors.error('UNAVAILABLE');
  } finally {
    clearTimeout(timer);
  }
}

function objectOrUndefined(value: unknown, part: 'context' | 'integrations'): Json | undefined {
  if (value === undefined || value === null) return undefined;
  if (!isObject(value)) throw trackingErrors.error('INVALID_BATCH', { part });
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
