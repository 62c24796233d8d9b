/**
 * What a process does about a Kafka or registry connection failure (connection-failures.ts says
 * which it is). One per process, like the runtime: every Kafka client of a service shares its
 * brokers and credentials. Decided in docs/decisions/0015-kafka-security-variables.md:
 *
 * - refused credentials, an untrusted or misnamed certificate, a failed TLS handshake, a missing
 *   ACL: retrying cannot help, so the service stops at once (exit 1) with one fatal line naming the
 *   cause and the variable (or the ACL) to fix. kafkajs would otherwise retry some of them
 *   (a TLS error is a connection error to it) for minutes, and the consumer restarts forever.
 * - an unreachable broker: kafkajs retries, as it rides out an outage at run time, and the log says
 *   so once per broker and cause rather than on every attempt. During start-up the service is not
 *   ready and `/readyz` names the broker and KAFKA_BROKERS (`problems`); a start-up connect still
 *   failing that way after STARTUP_UNREACHABLE_MS stops the service with that line (connect.ts),
 *   and the orchestrator's restart backoff retries it.
 *
 * A missing ACL seen only in a kafkajs log line (which names no resource) stops the service after
 * AUTHORIZATION_GRACE_MS, unless the operation that failed reports it first with its resources
 * (access-guard.ts): then the line names the topic, group or transactional id and the operation.
 */
import { classifyKafkaError, classifyKafkaLog, classifyRegistryError, explainFailure, type Access, type ConnectionFailure, type FailureContext } from '../connection-failures.js';
import type { Logger } from '../logger.js';
import { PLAINTEXT, type KafkaSecuritySettings } from './security.js';

export type FatalHandler = (message: string, failure: ConnectionFailure) => void;

const AUTHORIZATION_GRACE_MS = 2000;
/** How long an identical kafkajs line stays collapsed into a count. */
export const REPEAT_WINDOW_MS = 30_000;

/** A start-up failure in a program without a handler: the same one line, on stderr, and exit 1. */
const exitWithLine: FatalHandler = (message, failure) => {
  process.stderr.write(`${JSON.stringify({ level: 'fatal', time: new Date().toISOString(), msg: message, cause: failure.cause, code: failure.code })}\n`);
  process.exit(1);
};

export class FailureWatch {
  private context: FailureContext = { brokers: [], security: PLAINTEXT };
  /** Set by a program that may be stopped (createRuntime, setup): in any other process (tests, tools) the watch only judges. */
  private onFatal: FatalHandler | undefined;
  private stopped = false;
  private lastUnreachable: { failure: ConnectionFailure; message: string } | undefined;
  private pendingAuthorization: NodeJS.Timeout | undefined;
  private pendingFailure: ConnectionFailure | undefined;

  /** The runtime's fatal handler (log through the service's logger, exit 1). */
  handleFatal(onFatal: FatalHandler): void { this.onFatal = onFatal; }

  /** What createKafka connects with: named in the explanations (never a secret). */
  useKafka(brokers: readonly string[], security: KafkaSecuritySettings): void {
    this.context = { ...this.context, brokers, security };
  }

  useRegistry(registryUrl: string): void {
    this.context = { ...this.context, registryUrl };
  }

  /** The last unreachable broker, explained: for /readyz while a start-up connect retries. */
  unreachable(): string | undefined { return this.lastUnreachable?.message; }

  /** A connect succeeded: whatever was unreachable before is no more. */
  reachable(): void { this.lastUnreachable = undefined; }

  /** Stops the process if a broker is unreachable now (a start-up connect past its deadline); false otherwise. */
  stopIfUnreachable(): boolean {
    if (!this.lastUnreachable || !this.onFatal) return false;
    this.fatal(this.lastUnreachable.failure);
    return true;
  }

  explain(failure: ConnectionFailure, access?: Access): string {
    return explainFailure(failure, access ? { ...this.context, access } : this.context);
  }

  /** An error a Kafka operation raised (with what it touched, when known). Fatal causes stop the process. */
  kafkaError(err: unknown, access?: Access): ConnectionFailure | undefined {
    const failure = classifyKafkaError(err);
    // kafkajs replaces some refusals by errors of its own ("Failed to find group coordinator" for a
    // group the principal may not use): a failed operation on a resource of the type just refused
    // in a log line is taken to be that refusal, and named.
    const pending = this.pendingFailure;
    if (!failure && pending?.resourceType && access?.[pending.resourceType]) return this.act(pending, access);
    return this.act(failure, access);
  }

  registryError(err: unknown): ConnectionFailure | undefined {
    return this.act(classifyRegistryError(err));
  }

  /** A line kafkajs logged; returns its cause, so the logger can collapse it. */
  kafkaLog(entry: { message?: unknown; error?: unknown; broker?: unknown }): ConnectionFailure | undefined {
    const failure = classifyKafkaLog(entry);
    if (failure?.cause === 'authorization') {
      // The operation's own error names the resource; this names only its type.
      this.pendingFailure ??= failure;
      this.pendingAuthorization ??= setTimeout(() => this.fatal(failure), AUTHORIZATION_GRACE_MS);
      this.pendingAuthorization.unref();
      return failure;
    }
    return this.act(failure);
  }

  private act(failure: ConnectionFailure | undefined, access?: Access): ConnectionFailure | undefined {
    if (!failure) return undefined;
    if (failure.fatal) this.fatal(failure, access);
    else if (failure.cause === 'unreachable') this.lastUnreachable = { failure, message: this.explain(failure) };
    return failure;
  }

  /** Stops the process with the failure's one line (a start-up that failed; on stderr without a handler). */
  stop(failure: ConnectionFailure): void { this.fatal(failure, undefined, exitWithLine); }

  private fatal(failure: ConnectionFailure, access?: Access, fallback?: FatalHandler): void {
    const onFatal = this.onFatal ?? fallback;
    if (this.stopped || !onFatal) return;
    this.stopped = true;
    clearTimeout(this.pendingAuthorization);
    onFatal(this.explain(failure, access), failure);
  }

  /** For tests: forget every failure and handler. */
  reset(): void {
    clearTimeout(this.pendingAuthorization);
    this.pendingAuthorization = undefined;
    this.pendingFailure = undefined;
    this.stopped = false;
    this.lastUnreachable = undefined;
    this.onFatal = undefined;
    this.context = { brokers: [], security: PLAINTEXT };
  }
}

/** This process's watch. */
export const failureWatch = new FailureWatch();

/** The fatal handler of a process with a logger: the one line through it, then exit 1. */
export function exitOnFatal(logger: Logger): FatalHandler {
  return (message, failure) => {
    logger.fatal({ cause: failure.cause, code: failure.code, target: failure.target }, message);
    process.exit(1);
  };
}

/**
 * Collapses repeats of one kafkajs line: the first goes out, the same line again within
 * REPEAT_WINDOW_MS is counted, and the next one after the window carries the count.
 */
export class RepeatCollapser {
  private readonly seen = new Map<string, { until: number; suppressed: number }>();
  constructor(private readonly clock: () => number = Date.now, private readonly windowMs = REPEAT_WINDOW_MS) {}

  /** undefined: drop the line; otherwise log it, with how many were dropped since the last one. */
  admit(key: string): { repeats: number } | undefined {
    const now = this.clock();
    const entry = this.seen.get(key);
    if (entry && now < entry.until) { entry.suppressed += 1; return undefined; }
    if (this.seen.size >= 1000) this.seen.clear();
    this.seen.set(key, { until: now + this.windowMs, suppressed: 0 });
    return { repeats: entry?.suppressed ?? 0 };
  }
}

/** The logCreator's decision for one kafkajs line: what to log at which level, or nothing. */
export function kafkaLogLine(
  watch: FailureWatch, collapser: RepeatCollapser, level: 'error' | 'warn' | 'info' | 'debug', namespace: string, entry: Record<string, unknown>,
): { level: 'error' | 'warn' | 'info' | 'debug'; fields: Record<string, unknown>; msg: string } | undefined {
  // kafkajs attaches stacks to connection errors: one per attempt was the flood.
  const { message, stack: _stack, ...rest } = entry;
  const msg = typeof message === 'string' ? message : String(message);
  const failure = level === 'error' || level === 'warn' ? watch.kafkaLog(entry) : undefined;
  if (failure?.fatal && failure.cause !== 'authorization') return undefined; // the watch logs the one line
  const key = failure ? `${failure.cause}|${failure.code}|${failure.broker ?? ''}` : `${namespace}|${msg}|${typeof rest.error === 'string' ? rest.error : ''}`;
  const admitted = level === 'debug' ? { repeats: 0 } : collapser.admit(key);
  if (!admitted) return undefined;
  const repeats = admitted.repeats > 0 ? { repeats: admitted.repeats } : {};
  if (failure?.cause === 'unreachable') return { level, fields: { namespace, ...rest, ...repeats, cause: failure.code }, msg: `${watch.explain(failure)}; retrying (kafkajs: ${msg})` };
  return { level, fields: { namespace, ...rest, ...repeats }, msg };
}
