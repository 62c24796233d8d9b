import type { FastifyInstance } from 'fastify';
import type { Registry } from 'prom-client';
import { isRegistryError } from './connection-failures.js';
import { ConfigError } from './errors.js';
import { exitOnFatal, failureWatch } from './kafka/failure-watch.js';
import { createServer, type ServerOptions } from './http/server.js';
import { Lifecycle, type Readiness } from './lifecycle.js';
import { createLogger, type Logger } from './logger.js';
import { createMetricsRegistry } from './metrics.js';

/** What every service's main.ts starts from: one logger, one metrics registry, one lifecycle, one HTTP server. */
export interface ServiceRuntime {
  service: string;
  logger: Logger;
  metrics: Registry;
  lifecycle: Lifecycle;
  readiness: Readiness;
  server: FastifyInstance;
  /** Starts listening (health answers from then on) and registers the server's close. */
  listen(host: string, port: number): Promise<string>;
}

export interface RuntimeOptions {
  service: string;
  logLevel: string;
  server?: Omit<ServerOptions, 'logger' | 'metrics' | 'readiness'>;
  shutdownTimeoutMs?: number;
}

/** The readiness check that holds a service not ready until its main has finished starting. */
const START_UP = 'start-up';
/** This process's runtime's readiness (one service per process): runMain marks start-up done. */
let startingReadiness: Readiness | undefined;

export function createRuntime({ service, logLevel, server: serverOptions, shutdownTimeoutMs }: RuntimeOptions): ServiceRuntime {
  const logger = createLogger({ service, level: logLevel });
  const metrics = createMetricsRegistry(service);
  const lifecycle = new Lifecycle(logger, shutdownTimeoutMs);
  failureWatch.handleFatal(exitOnFatal(logger));
  const server = createServer({ logger, metrics, readiness: lifecycle.readiness, ...serverOptions });
  lifecycle.handleSignals();
  // Ready only once main finished (runMain): between two start-up steps every check registered so
  // far could be true while the next was not registered yet, and /readyz said ready too early.
  lifecycle.readiness.set(START_UP, false);
  startingReadiness = lifecycle.readiness;
  return {
    service, logger, metrics, lifecycle, readiness: lifecycle.readiness, server,
    async listen(host, port) {
      const address = await server.listen({ host, port });
      // Closers run in reverse order of registration: whatever the service opened after listening
      // (consumers) closes before the server, whatever it opened before (producers) after it.
      lifecycle.onShutdown('http', async () => {
        // close() drops the connections idle at that moment; one that falls idle later (a response
        // still being read, an ended event stream) would hold it until its keep-alive timeout.
        // Whatever is still open after 5 s (a stream or a request that will not finish) is cut: a
        // client sees the connection drop and retries, rather than shutdown running out its budget.
        const sweep = setInterval(() => server.server.closeIdleConnections(), 250);
        const force = setTimeout(() => {
          logger.warn({ component: 'http' }, 'connections still open 5 s into shutdown: closing them');
          server.server.closeAllConnections();
        }, 5000);
        try { await server.close(); } finally { clearInterval(sweep); clearTimeout(force); }
      });
      logger.info({ address }, 'listening');
      return address;
    },
  };
}

/**
 * Runs a service's main: once it has finished, the service may report ready (the `start-up` check);
 * configuration errors print every problem and exit 2; a Kafka or registry connection failure
 * (failure-watch.ts) one line naming its cause and variable, exit 1; any other start-up failure is
 * logged and exits 1 (the orchestrator restarts the pod).
 */
export function runMain(service: string, main: () => Promise<unknown>): void {
  main().then(() => startingReadiness?.set(START_UP, true)).catch((err: unknown) => {
    // Stopped while starting (SIGTERM during a connect): the shutdown in progress decides the exit.
    if (Lifecycle.signalled) return;
    if (err instanceof ConfigError) {
      process.stderr.write(`${service}: ${err.message}\n`);
      process.exit(2);
    }
    const failure = isRegistryError(err) ? failureWatch.registryError(err) : failureWatch.kafkaError(err);
    if (failure) { failureWatch.stop(failure); return; }
    process.stderr.write(`${JSON.stringify({ level: 'fatal', service, msg: 'start-up failed', err: { message: (err as Error)?.message, stack: (err as Error)?.stack } })}\n`);
    process.exit(1);
  });
}
